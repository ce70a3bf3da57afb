/* The views that need the whole profile in memory (report/profile.h). */
#include "view/model.h"

#include "base/error.h"

#include <stdlib.h>

struct cp_web_full {
	int unused;
};

int cp_web_full_node(struct cp_web_ctx *c, const struct cp_web_node *id, struct cp_web_row *out)
{
	return cp_error(CP_ENOTSUP, "not yet served");
}

int cp_web_full_children(struct cp_web_ctx *c, const struct cp_web_node *id, cp_web_row_fn fn,
			 void *arg)
{
	return cp_error(CP_ENOTSUP, "not yet served");
}

void cp_web_full_free(struct cp_web_full *f)
{
	free(f);
}
