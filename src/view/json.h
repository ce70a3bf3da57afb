/* Writing JSON into a strbuf: what the API's answers are made of. */
#ifndef CP_VIEW_JSON_H
#define CP_VIEW_JSON_H

#include "base/strbuf.h"

#include <stdint.h>

/* "s" escaped, or null. */
void json_str(struct strbuf *b, const char *s);
/* A number (integers exactly, others with 17 significant digits); null for NaN/inf. */
void json_num(struct strbuf *b, double v);
/* "key": (with a leading comma unless first) */
void json_key(struct strbuf *b, const char *key, int first);
void json_kv_str(struct strbuf *b, const char *key, const char *s);
void json_kv_num(struct strbuf *b, const char *key, double v);
void json_kv_id(struct strbuf *b, const char *key, uint32_t id); /* null for UINT32_MAX */

#endif
