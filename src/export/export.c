/* Format table, metric choice, the frame walk shared by the exporters, and
 * cp_export_write (temporary file + rename). */
#include "export/export.h"
#include "export/export-impl.h"

#include "base/atomic-file.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name, *file;
	int (*write)(const struct cp_db *, const struct cp_export_options *, FILE *);
} formats[CP_EXPORT_NFORMATS] = {
    [CP_EXPORT_CALLGRIND] = {"callgrind", "callgrind.out.callpath", cp_export_callgrind},
    [CP_EXPORT_PPROF] = {"pprof", "profile.pb.gz", cp_export_pprof},
    [CP_EXPORT_FOLDED] = {"folded", "profile.folded", cp_export_folded},
    [CP_EXPORT_SPEEDSCOPE] = {"speedscope", "profile.speedscope.json", cp_export_speedscope},
    [CP_EXPORT_GMON] = {"gmon", "gmon.out", cp_export_gmon},
};

int cp_export_format_parse(const char *name)
{
	for (int i = 0; i < CP_EXPORT_NFORMATS; i++)
		if (!strcmp(name, formats[i].name))
			return i;
	return -1;
}

const char *cp_export_format_name(enum cp_export_format f)
{
	return (unsigned)f < CP_EXPORT_NFORMATS ? formats[f].name : "?";
}

const char *cp_export_default_file(enum cp_export_format f)
{
	return (unsigned)f < CP_EXPORT_NFORMATS ? formats[f].file : NULL;
}

void cp_export_options_init(struct cp_export_options *o)
{
	o->metric = CP_DB_NONE;
	o->module = CP_DB_NONE;
}

int cp_export_check_db(const struct cp_db *db)
{
	if (!db->finished || !db->stats)
		return cp_error(CP_EINTERNAL, "export: the database is not finished");
	if (cp_db_nraw(db) == 0)
		return cp_error(CP_EINVAL, "export: the profile has no measured metric");
	return 0;
}

int cp_export_start(const struct cp_db *db, const struct cp_export_options *o, uint32_t *metric)
{
	int rc = cp_export_check_db(db);
	if (rc)
		return rc;
	*metric = cp_export_metric(db, o);
	return *metric == CP_DB_NONE ? CP_EINVAL : 0;
}

uint32_t cp_export_metric(const struct cp_db *db, const struct cp_export_options *o)
{
	size_t nraw = cp_db_nraw(db);
	if (nraw == 0) {
		cp_error(CP_EINVAL, "export: the profile has no measured metric");
		return CP_DB_NONE;
	}
	if (o && o->metric != CP_DB_NONE) {
		if (o->metric >= db->nmetrics) {
			cp_error(CP_EINVAL, "export: no metric %u", o->metric);
			return CP_DB_NONE;
		}
		if (o->metric >= nraw) {
			cp_error(CP_EINVAL,
				 "export: %s is a derived metric; exports take a measured metric "
				 "(derived values do not add up along call paths)",
				 db->metrics[o->metric].name);
			return CP_DB_NONE;
		}
		return o->metric;
	}
	for (size_t i = 0; i < nraw; i++)
		if (db->metrics[i].unit && !strcmp(db->metrics[i].unit, "ns"))
			return (uint32_t)i;
	return 0;
}

double cp_export_excl(const struct cp_db *db, uint32_t scope, uint32_t metric)
{
	double v = cp_db_stat_get(db, scope, metric, 0)->sum;
	if (v == 0)
		return 0;
	for (uint32_t c = db->scopes[scope].first_child; c != CP_DB_NONE;
	     c = db->scopes[c].next_sibling) {
		uint8_t k = db->scopes[c].kind;
		if (k != CP_DBK_PROC && k != CP_DBK_PARTIAL)
			v -= cp_db_stat_get(db, c, metric, 0)->sum;
	}
	return v;
}

uint32_t cp_export_frame_of(const struct cp_db *db, uint32_t s)
{
	while (s != CP_DB_NONE && s < db->nscopes && !cp_export_is_frame(&db->scopes[s]))
		s = db->scopes[s].parent;
	return s < db->nscopes ? s : CP_DB_NONE;
}

uint32_t cp_export_proc_frame_of(const struct cp_db *db, uint32_t s)
{
	while (s != CP_DB_NONE && s < db->nscopes && db->scopes[s].kind != CP_DBK_PROC)
		s = db->scopes[s].parent;
	return s < db->nscopes ? s : CP_DB_NONE;
}

const char *cp_export_frame_name(const struct cp_db *db, uint32_t frame)
{
	if (frame == CP_DB_NONE || frame >= db->nscopes)
		return "[unknown]";
	const struct cp_db_scope *s = &db->scopes[frame];
	if (s->kind == CP_DBK_PARTIAL)
		return "[partial unwind]";
	if ((s->kind == CP_DBK_PROC || s->kind == CP_DBK_INLINE) && s->proc < db->nprocs &&
	    db->procs[s->proc].name)
		return db->procs[s->proc].name;
	return "[unknown]";
}

const char *cp_export_file(const struct cp_db *db, uint32_t file)
{
	return file < db->nfiles && db->files[file].path ? db->files[file].path : "";
}

size_t cp_export_stack(const struct cp_db *db, uint32_t frame, uint32_t *frames, size_t max)
{
	size_t n = 0;
	for (uint32_t s = frame; s != CP_DB_NONE && s < db->nscopes; s = db->scopes[s].parent)
		if (cp_export_is_frame(&db->scopes[s]))
			n++;
	size_t skip = n > max ? n - max : 0, k = n - skip;
	size_t i = 0;
	for (uint32_t s = frame; s != CP_DB_NONE && s < db->nscopes; s = db->scopes[s].parent) {
		if (!cp_export_is_frame(&db->scopes[s]))
			continue;
		if (i < k)
			frames[k - 1 - i] = s;
		i++;
	}
	return k;
}

double *cp_export_frame_self(const struct cp_db *db, uint32_t metric)
{
	double *self = xcalloc(db->nscopes ? db->nscopes : 1, sizeof(*self));
	/* Children have larger ids than parents: one pass from the leaves up. */
	uint32_t *frame = xmalloc((db->nscopes ? db->nscopes : 1) * sizeof(*frame));
	for (size_t s = 0; s < db->nscopes; s++) {
		const struct cp_db_scope *sc = &db->scopes[s];
		if (cp_export_is_frame(sc) || s == 0)
			frame[s] = (uint32_t)s;
		else
			frame[s] = sc->parent < s ? frame[sc->parent] : 0;
	}
	for (size_t s = 0; s < db->nscopes; s++) {
		double v = cp_export_excl(db, (uint32_t)s, metric);
		if (v != 0)
			self[frame[s]] += v;
	}
	free(frame);
	return self;
}

int cp_export_write(const struct cp_db *db, enum cp_export_format f,
		    const struct cp_export_options *o, const char *path)
{
	if ((unsigned)f >= CP_EXPORT_NFORMATS)
		return cp_error(CP_EINVAL, "export: unknown format %d", (int)f);
	int rc = cp_export_check_db(db);
	if (rc)
		return rc;
	if (!strcmp(path, "-")) {
		rc = formats[f].write(db, o, stdout);
		if (!rc && fflush(stdout))
			rc = cp_error(CP_EIO, "writing standard output: %s", strerror(errno));
		return rc;
	}
	struct cp_atomic_file af;
	if ((rc = cp_atomic_begin(&af, path, 0)))
		return rc;
	FILE *out = fdopen(af.fd, "wb");
	if (!out)
		return cp_atomic_commit(
		    &af, cp_error(CP_EIO, "cannot create %s: %s", path, strerror(errno)));
	af.fd = -1; /* out owns it */
	rc = formats[f].write(db, o, out);
	if (ferror(out) && !rc)
		rc = cp_error(CP_EIO, "writing %s: %s", path, strerror(errno));
	if (fclose(out) && !rc)
		rc = cp_error(CP_EIO, "writing %s: %s", path, strerror(errno));
	return cp_atomic_commit(&af, rc);
}

uint64_t *cp_export_call_counts(const struct cp_db *db, uint32_t metric, int *exact)
{
	uint64_t *calls = xcalloc(db->nscopes ? db->nscopes : 1, sizeof(*calls));
	uint32_t cm = cp_db_metric_find(db, "calls");
	*exact = cm != CP_DB_NONE && cm < cp_db_nraw(db);
	if (*exact) {
		double *self =
		    xmalloc((db->nscopes ? db->nscopes : 1) * db->nmetrics * sizeof(*self));
		cp_db_self_sums(db, self);
		for (size_t s = 0; s < db->nscopes; s++)
			if (db->scopes[s].kind == CP_DBK_PROC) {
				double v = self[s * db->nmetrics + cm];
				calls[s] = v > 0 ? (uint64_t)llround(v) : 0;
			}
		free(self);
		return calls;
	}
	double period = (double)db->metrics[metric].period;
	for (size_t s = 0; s < db->nscopes; s++) {
		if (db->scopes[s].kind != CP_DBK_PROC)
			continue;
		double v = cp_export_incl(db, (uint32_t)s, metric);
		if (v <= 0)
			continue;
		double n = period > 0 ? v / period : v;
		calls[s] = n < 1 ? 1 : (uint64_t)llround(n);
	}
	return calls;
}
