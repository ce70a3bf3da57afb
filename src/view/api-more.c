/* Endpoints still to come (stubs answer 501). */
#include "view/api-impl.h"

#define STUB(fn)                                                                                   \
	void fn(struct cp_web_ctx *c, struct cp_web_resp *out)                                     \
	{                                                                                          \
		cp_web_resp_error(out, 501, "not implemented yet");                                \
	}
STUB(cp_web_api_search)
STUB(cp_web_api_source)
STUB(cp_web_api_flame)
STUB(cp_web_api_sandwich)
STUB(cp_web_api_callgraph)
STUB(cp_web_api_threads)
