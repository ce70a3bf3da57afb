/* `callpath view --html`: one self-contained HTML file (docs/cmd-view.md, "The
 * self-contained file"). */
#include "view/web.h"

#include "base/error.h"

int cp_web_write_html(const struct cp_web_options *o, FILE *out)
{
	return cp_error(CP_ENOTSUP, "view --html: not implemented yet");
}
