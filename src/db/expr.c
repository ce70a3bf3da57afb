/* Derived-metric formulas (expr.h): a recursive-descent parser that compiles to a small
 * stack program, evaluated once per scope and statistic. */
#include "db/expr.h"

#include "base/error.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum op {
	OP_NUM,
	OP_METRIC,
	OP_NEG,
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MIN,
	OP_MAX,
	OP_ABS,
	OP_SQRT,
};

struct insn {
	enum op op;
	uint32_t metric;
	double num;
};

struct cp_expr {
	struct insn *code;
	size_t n, alloc;
	size_t depth; /* stack needed */
};

struct parser {
	const char *text, *p;
	cp_expr_lookup_fn lookup;
	void *ctx;
	struct cp_expr *e;
	int err;
	size_t sp, maxsp;
	int nesting;
};

static int perr(struct parser *ps, const char *at, const char *what, const char *arg, int arglen)
{
	if (ps->err)
		return ps->err;
	ps->err = CP_EINVAL;
	/* long formulas are shown cut, so that the message keeps its point */
	int len = (int)strlen(ps->text), shown = len > 80 ? 77 : len;
	const char *more = len > 80 ? "..." : "";
	if (arglen > 80)
		arglen = 80;
	if (arg)
		return cp_error(CP_EINVAL, "formula '%.*s%s': column %d: %s '%.*s'", shown,
				ps->text, more, (int)(at - ps->text) + 1, what, arglen, arg);
	return cp_error(CP_EINVAL, "formula '%.*s%s': column %d: %s", shown, ps->text, more,
			(int)(at - ps->text) + 1, what);
}

static void emit(struct parser *ps, enum op op, uint32_t metric, double num)
{
	struct cp_expr *e = ps->e;
	XGROW(e->code, e->n + 1, e->alloc);
	e->code[e->n++] = (struct insn){op, metric, num};
	if (op == OP_NUM || op == OP_METRIC) {
		if (++ps->sp > ps->maxsp)
			ps->maxsp = ps->sp;
	} else if (op >= OP_ADD && op <= OP_MAX) {
		ps->sp--;
	}
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void parse_expr(struct parser *ps);

static void parse_number(struct parser *ps)
{
	const char *s = ps->p, *q = s;
	while (is_digit(*q))
		q++;
	if (*q == '.') {
		q++;
		while (is_digit(*q))
			q++;
	}
	if ((*q == 'e' || *q == 'E') &&
	    (is_digit(q[1]) || ((q[1] == '+' || q[1] == '-') && is_digit(q[2])))) {
		q += 2;
		while (is_digit(*q))
			q++;
	}
	if (q == s || (q == s + 1 && *s == '.')) {
		perr(ps, s, "bad number", NULL, 0);
		return;
	}
	char buf[64];
	size_t len = (size_t)(q - s);
	if (len >= sizeof buf) {
		perr(ps, s, "number too long", NULL, 0);
		return;
	}
	memcpy(buf, s, len);
	buf[len] = 0;
	if (is_name_start(*q)) {
		perr(ps, q, "expected an operator before", q, 1);
		return;
	}
	ps->p = q;
	emit(ps, OP_NUM, 0, strtod(buf, NULL));
}

struct func {
	const char *name;
	enum op op;
	int nargs;
};

static const struct func funcs[] = {
    {"min", OP_MIN, 2},
    {"max", OP_MAX, 2},
    {"abs", OP_ABS, 1},
    {"sqrt", OP_SQRT, 1},
};

static void parse_call(struct parser *ps, const char *name, size_t len)
{
	const struct func *f = NULL;
	for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
		if (strlen(funcs[i].name) == len && !memcmp(funcs[i].name, name, len))
			f = &funcs[i];
	if (!f) {
		perr(ps, name, "unknown function (min, max, abs, sqrt)", name, (int)len);
		return;
	}
	ps->p++; /* '(' */
	for (int a = 0; a < f->nargs && !ps->err; a++) {
		if (a) {
			skip_space(ps);
			if (*ps->p != ',') {
				perr(ps, ps->p,
				     f->nargs == 2
					 ? "expected ',' (this function takes 2 arguments)"
					 : "expected ','",
				     NULL, 0);
				return;
			}
			ps->p++;
		}
		parse_expr(ps);
	}
	if (ps->err)
		return;
	skip_space(ps);
	if (*ps->p != ')') {
		perr(ps, ps->p,
		     *ps->p == ',' ? "too many arguments" : "expected ')' closing the call", NULL,
		     0);
		return;
	}
	ps->p++;
	emit(ps, f->op, 0, 0);
}

/* The longest known metric name in the run of name characters at s, cut only at a '-'. */
static void parse_name(struct parser *ps)
{
	const char *s = ps->p, *q = s;
	while (is_name_char(*q))
		q++;
	const char *after = q;
	while (after[0] == ' ' || after[0] == '\t')
		after++;
	if (*after == '(' && !memchr(s, '-', (size_t)(q - s))) {
		ps->p = after;
		parse_call(ps, s, (size_t)(q - s));
		return;
	}
	for (const char *end = q; end > s;) {
		uint32_t id = ps->lookup(ps->ctx, s, (size_t)(end - s));
		if (id != UINT32_MAX) {
			ps->p = end;
			emit(ps, OP_METRIC, id, 0);
			return;
		}
		do /* the previous '-' */
			end--;
		while (end > s && *end != '-');
	}
	perr(ps, s, "unknown metric", s, (int)(q - s));
}

static void parse_primary(struct parser *ps)
{
	skip_space(ps);
	char c = *ps->p;
	if (is_digit(c) || (c == '.' && is_digit(ps->p[1]))) {
		parse_number(ps);
	} else if (is_name_start(c)) {
		parse_name(ps);
	} else if (c == '(') {
		const char *open = ps->p++;
		parse_expr(ps);
		if (ps->err)
			return;
		skip_space(ps);
		if (*ps->p != ')') {
			perr(ps, *ps->p ? ps->p : open,
			     *ps->p ? "expected ')'" : "unbalanced '(' opened here", NULL, 0);
			return;
		}
		ps->p++;
	} else if (!c) {
		perr(ps, ps->p, "unexpected end of formula", NULL, 0);
	} else {
		perr(ps, ps->p, "unexpected character", ps->p, 1);
	}
}

/* Deep enough for any formula a person writes; bounds the recursion on hostile input
 * (formulas also come from database files). */
#define MAX_NESTING 200

static void parse_unary(struct parser *ps)
{
	skip_space(ps);
	if (++ps->nesting > MAX_NESTING) {
		perr(ps, ps->p, "nested too deeply", NULL, 0);
		return;
	}
	if (*ps->p == '-') {
		ps->p++;
		parse_unary(ps);
		emit(ps, OP_NEG, 0, 0);
	} else if (*ps->p == '+') {
		ps->p++;
		parse_unary(ps);
	} else {
		parse_primary(ps);
	}
	ps->nesting--;
}

static void parse_term(struct parser *ps)
{
	parse_unary(ps);
	while (!ps->err) {
		skip_space(ps);
		char c = *ps->p;
		if (c != '*' && c != '/')
			return;
		ps->p++;
		parse_unary(ps);
		emit(ps, c == '*' ? OP_MUL : OP_DIV, 0, 0);
	}
}

static void parse_expr(struct parser *ps)
{
	parse_term(ps);
	while (!ps->err) {
		skip_space(ps);
		char c = *ps->p;
		if (c != '+' && c != '-')
			return;
		ps->p++;
		parse_term(ps);
		emit(ps, c == '+' ? OP_ADD : OP_SUB, 0, 0);
	}
}

int cp_expr_parse(const char *text, cp_expr_lookup_fn lookup, void *ctx, struct cp_expr **out)
{
	struct parser ps = {.text = text, .p = text, .lookup = lookup, .ctx = ctx};
	ps.e = xcalloc(1, sizeof *ps.e);
	*out = NULL;
	parse_expr(&ps);
	if (!ps.err) {
		skip_space(&ps);
		char c = *ps.p;
		if (c == ')')
			perr(&ps, ps.p, "unbalanced ')'", NULL, 0);
		else if (c && (is_name_char(c) || c == '(' || c == '.'))
			perr(&ps, ps.p, "expected an operator before", ps.p, 1);
		else if (c)
			perr(&ps, ps.p, "unexpected character", ps.p, 1);
	}
	if (ps.err) {
		cp_expr_free(ps.e);
		return ps.err;
	}
	ps.e->depth = ps.maxsp;
	*out = ps.e;
	return 0;
}

double cp_expr_eval(const struct cp_expr *e, const double *values)
{
	double small[32];
	double *st = e->depth <= 32 ? small : xmalloc(e->depth * sizeof *st);
	size_t sp = 0;
	for (size_t i = 0; i < e->n; i++) {
		const struct insn *in = &e->code[i];
		double a, b;
		switch (in->op) {
		case OP_NUM:
			st[sp++] = in->num;
			continue;
		case OP_METRIC:
			st[sp++] = values[in->metric];
			continue;
		case OP_NEG:
			st[sp - 1] = -st[sp - 1];
			continue;
		case OP_ABS:
			st[sp - 1] = fabs(st[sp - 1]);
			continue;
		case OP_SQRT:
			a = st[sp - 1];
			st[sp - 1] = a < 0 || isnan(a) ? NAN : sqrt(a);
			continue;
		default:
			break;
		}
		b = st[--sp];
		a = st[sp - 1];
		switch (in->op) {
		case OP_ADD:
			a += b;
			break;
		case OP_SUB:
			a -= b;
			break;
		case OP_MUL:
			a *= b;
			break;
		case OP_DIV:
			a = b == 0 ? NAN : a / b;
			break;
		case OP_MIN:
			a = isnan(a) || isnan(b) ? NAN : a < b ? a : b;
			break;
		case OP_MAX:
			a = isnan(a) || isnan(b) ? NAN : a > b ? a : b;
			break;
		default:
			break;
		}
		st[sp - 1] = a;
	}
	double r = sp ? st[sp - 1] : NAN;
	if (st != small)
		free(st);
	return r;
}

size_t cp_expr_inputs(const struct cp_expr *e, uint32_t *ids, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < e->n; i++) {
		if (e->code[i].op != OP_METRIC)
			continue;
		size_t k = 0;
		while (k < n && k < max && ids[k] != e->code[i].metric)
			k++;
		if (k < n)
			continue;
		if (n < max)
			ids[n] = e->code[i].metric;
		n++;
	}
	return n < max ? n : max;
}

void cp_expr_free(struct cp_expr *e)
{
	if (!e)
		return;
	free(e->code);
	free(e);
}
