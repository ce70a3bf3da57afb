/* Derived metrics (db.h, expr.h): formulas evaluated on each summary statistic of their
 * inputs, for inclusive and exclusive values, and the presets. */
#include "db/db-impl.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t lookup(void *ctx, const char *name, size_t len)
{
	const struct cp_db *db = ctx;
	for (size_t i = 0; i < db->nmetrics; i++)
		if (strlen(db->metrics[i].name) == len && !memcmp(db->metrics[i].name, name, len))
			return (uint32_t)i;
	return UINT32_MAX;
}

void cp_db_derived_compute(struct cp_db *db, uint32_t metric)
{
	const struct cp_expr *e = cp_db_impl(db)->exprs[metric];
	size_t nm = db->nmetrics;
	uint32_t in[CP_DB_MAX_METRICS * 2];
	size_t nin = cp_expr_inputs(e, in, sizeof in / sizeof in[0]);
	double *vals = xcalloc(nm, sizeof *vals);
	static const enum cp_db_statkind kinds[] = {CP_DB_STAT_SUM, CP_DB_STAT_MEAN, CP_DB_STAT_MIN,
						    CP_DB_STAT_MAX, CP_DB_STAT_STDDEV};
	for (size_t s = 0; s < db->nscopes; s++) {
		for (int incl = 0; incl < 2; incl++) {
			struct cp_db_stat *out = &db->stats[(s * nm + metric) * 2 + incl];
			uint32_t count = 0;
			for (size_t i = 0; i < nin; i++) {
				const struct cp_db_stat *st =
				    cp_db_stat_get(db, (uint32_t)s, in[i], incl);
				if (st->count > count)
					count = st->count;
			}
			memset(out, 0, sizeof *out);
			out->argmax = CP_DB_NONE;
			if (!count) /* no thread reached it: like a raw metric, all 0 */
				continue;
			double r[5];
			for (size_t k = 0; k < 5; k++) {
				for (size_t i = 0; i < nin; i++)
					vals[in[i]] = cp_db_stat_value(
					    cp_db_stat_get(db, (uint32_t)s, in[i], incl), kinds[k]);
				r[k] = cp_expr_eval(e, vals);
			}
			out->sum = r[0];
			out->mean = r[1];
			out->min = r[2];
			out->max = r[3];
			out->stddev = r[4];
			out->count = count;
		}
	}
	free(vals);
}

static int name_ok(const char *n)
{
	if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || *n == '_'))
		return 0;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || *n == '_' ||
		      (*n >= '0' && *n <= '9') || *n == '-' || *n == '.' || *n == ':'))
			return 0;
	return 1;
}

int cp_db_derived_add(struct cp_db *db, const char *name, const char *formula, const char *unit,
		      const char *description)
{
	if (!name || !name_ok(name))
		return cp_error(CP_EINVAL,
				"derived metric '%s': a name starts with a letter or '_' and has "
				"only letters, digits, '_', '-', '.', ':'",
				name ? name : "");
	if (cp_db_metric_find(db, name) != CP_DB_NONE)
		return cp_error(CP_EINVAL, "derived metric '%s': a metric of that name exists",
				name);
	struct cp_expr *e;
	int rc = cp_expr_parse(formula ? formula : "", lookup, db, &e);
	if (rc < 0)
		return cp_error_prefix(rc, "derived metric '%s'", name);
	struct cp_db_metric m = {
	    .name = name,
	    .unit = unit ? unit : "",
	    .description = description,
	    .formula = formula,
	    .kind = CP_DB_METRIC_DERIVED,
	};
	return (int)cp_db_metric_add_derived(db, &m, e);
}

int cp_db_derived_add_spec(struct cp_db *db, const char *spec)
{
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec)
		return cp_error(CP_EINVAL, "derived metric '%s': expected NAME=FORMULA", spec);
	char *name = xstrndup(spec, (size_t)(eq - spec));
	size_t n = strlen(name);
	while (n && (name[n - 1] == ' ' || name[n - 1] == '\t'))
		name[--n] = 0;
	const char *start = name;
	while (*start == ' ' || *start == '\t')
		start++;
	int rc = cp_db_derived_add(db, start, eq + 1, "", NULL);
	free(name);
	return rc;
}

static const char *fp_metric(const struct cp_db *db)
{
	static const char *const exact[] = {"fp_ops", "fp-ops", "PAPI_FP_OPS"};
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (cp_db_metric_find(db, exact[i]) != CP_DB_NONE)
			return exact[i];
	for (size_t i = 0; i < cp_db_nraw(db); i++)
		if (!strncmp(db->metrics[i].name, "FP_ARITH", 8))
			return db->metrics[i].name;
	return NULL;
}

static int preset(struct cp_db *db, const char *name, const char *formula, const char *unit,
		  const char *desc)
{
	if (cp_db_metric_find(db, name) != CP_DB_NONE)
		return 0;
	return cp_db_derived_add(db, name, formula, unit, desc) >= 0;
}

static int has(const struct cp_db *db, const char *a, const char *b)
{
	return cp_db_metric_find(db, a) != CP_DB_NONE && cp_db_metric_find(db, b) != CP_DB_NONE;
}

int cp_db_presets_add(struct cp_db *db, double waste_factor)
{
	int n = 0;
	if (has(db, "instructions", "cycles"))
		n += preset(db, "ipc", "instructions / cycles", "", "instructions per cycle");
	if (has(db, "cache-misses", "cache-references"))
		n += preset(db, "cache-miss-ratio", "cache-misses / cache-references", "",
			    "fraction of cache references that missed");
	if (has(db, "branch-misses", "branches"))
		n += preset(db, "branch-miss-ratio", "branch-misses / branches", "",
			    "fraction of branches mispredicted");
	const char *fp = fp_metric(db);
	struct strbuf f;
	strbuf_init(&f);
	if (fp && cp_db_metric_find(db, "cputime") != CP_DB_NONE) {
		strbuf_addf(&f, "%s / cputime * 1000", fp);
		n += preset(db, "mflops", f.buf, "MFLOP/s",
			    "floating-point operations per microsecond of CPU time");
	}
	if (fp && cp_db_metric_find(db, "cycles") != CP_DB_NONE) {
		strbuf_clear(&f);
		strbuf_addf(&f, "%.17g * cycles - %s", waste_factor > 0 ? waste_factor : 2.0, fp);
		n += preset(db, "waste", f.buf, "events",
			    "F*cycles - FP operations: FP issue slots not used (F = peak FP "
			    "operations per cycle)");
	}
	strbuf_release(&f);
	return n;
}
