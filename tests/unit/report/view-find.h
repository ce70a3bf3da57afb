/* Test helper shared by the report's unit tests (include after cmocka.h). */
#ifndef CP_TEST_REPORT_VIEW_FIND_H
#define CP_TEST_REPORT_VIEW_FIND_H

#include "report/view.h"

#include <string.h>

/* The child of parent named name; fails the test when there is none. */
static inline uint32_t child_named(const struct cp_view *v, uint32_t parent, const char *name)
{
	for (uint32_t c = v->nodes[parent].first_child; c != UINT32_MAX;
	     c = v->nodes[c].next_sibling)
		if (!strcmp(v->nodes[c].name, name))
			return c;
	fail_msg("no child %s below %s", name, v->nodes[parent].name);
	return UINT32_MAX;
}

#endif
