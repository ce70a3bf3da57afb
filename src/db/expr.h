/* Formulas of derived metrics: `NAME=FORMULA` with FORMULA over metric names, numbers
 * (2, 0.5, 1e6), + - * /, unary minus, parentheses and the functions min(a,b), max(a,b),
 * abs(x), sqrt(x). Precedence: unary minus > * / > + -, left associative.
 *
 * Metric names consist of letters, digits, '_', '-', '.' and ':' and start with a letter
 * or '_' ("cache-misses", "FP_ARITH:SCALAR_DOUBLE"). Because '-' may be part of a name, a
 * run of name characters is read as the LONGEST KNOWN metric name it starts with, cut
 * only at a '-': with metrics "cycles" and "fp_ops", `2*cycles-fp_ops` is 2*cycles minus
 * fp_ops, and `cache-misses` is the metric cache-misses when it exists. Spaces around a
 * binary minus always make it a minus. An identifier directly followed by '(' is a
 * function.
 *
 * Values: IEEE doubles. Division by zero (including 0/0) and sqrt of a negative number give
 * NaN, "no value": NaN propagates through every operation (min/max included); views render
 * it empty, sort it last; JSON null, SQL NULL. */
#ifndef CP_DB_EXPR_H
#define CP_DB_EXPR_H

#include <stddef.h>
#include <stdint.h>

struct cp_expr;

/* Id of the metric named name[0..len), or UINT32_MAX if there is none. */
typedef uint32_t (*cp_expr_lookup_fn)(void *ctx, const char *name, size_t len);

/* Compiles text. 0, or CP_EINVAL with cp_error() set: "formula 'T': column C: what",
 * columns counted from 1. */
int cp_expr_parse(const char *text, cp_expr_lookup_fn lookup, void *ctx, struct cp_expr **out);
/* Evaluates with values[id] the value of metric id. */
double cp_expr_eval(const struct cp_expr *e, const double *values);
/* The distinct metric ids the formula reads (up to max of them); returns how many. */
size_t cp_expr_inputs(const struct cp_expr *e, uint32_t *ids, size_t max);
void cp_expr_free(struct cp_expr *e);

#endif
