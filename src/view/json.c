#include "view/json.h"

#include <math.h>
#include <stdio.h>

void json_str(struct strbuf *b, const char *s)
{
	if (!s) {
		strbuf_addstr(b, "null");
		return;
	}
	strbuf_addch(b, '"');
	strbuf_add_json(b, s);
	strbuf_addch(b, '"');
}

void json_num(struct strbuf *b, double v)
{
	if (!isfinite(v))
		strbuf_addstr(b, "null");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		strbuf_addf(b, "%.0f", v);
	else
		strbuf_addf(b, "%.17g", v);
}

void json_key(struct strbuf *b, const char *key, int first)
{
	if (!first)
		strbuf_addch(b, ',');
	json_str(b, key);
	strbuf_addch(b, ':');
}

void json_kv_str(struct strbuf *b, const char *key, const char *s)
{
	json_key(b, key, 0);
	json_str(b, s);
}

void json_kv_num(struct strbuf *b, const char *key, double v)
{
	json_key(b, key, 0);
	json_num(b, v);
}

void json_kv_id(struct strbuf *b, const char *key, uint32_t id)
{
	json_key(b, key, 0);
	if (id == UINT32_MAX)
		strbuf_addstr(b, "null");
	else
		strbuf_addf(b, "%u", id);
}
