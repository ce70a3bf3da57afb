/* callpath-analyze-mpi: `mpirun -np K callpath analyze --mpi DIR` (the CLI execs this
 * program; mpirun may also start it directly with the same arguments). Every rank lists
 * DIR and correlates a consecutive share of its process images into a database of its
 * own; a binomial tree merges them in rank order (reduce.h); rank 0, which also scanned
 * the process files, finishes the database and writes it: the same database as
 * `callpath analyze DIR`, row for row. Each rank prints its share and peak memory. */
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/analyze.h"
#include "db/sync-objects.h"
#include "mpi-analyze/reduce.h"

#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Open MPI's components leave allocations behind at MPI_Finalize and are unloaded by
 * then, so their frames cannot be suppressed by name: LeakSanitizer is off in this program
 * (sanitizer builds only read this). The database code it runs is leak-checked by the
 * unit tests and by `callpath analyze`. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

struct args {
	const char *dir, *out;
	int quiet;
	const char **derived;
	size_t nderived;
};

static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
	    {"output", required_argument, 0, 'o'}, {"metric", required_argument, 0, 'm'},
	    {"jobs", required_argument, 0, 'j'},   {"quiet", no_argument, 0, 'q'},
	    {"mpi", no_argument, 0, 'M'},	   {0, 0, 0, 0},
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:j:q", longopts, NULL)) != -1) {
		if (c == 'o')
			a->out = optarg;
		else if (c == 'm')
			a->derived[a->nderived++] = optarg;
		else if (c == 'q')
			a->quiet = 1;
		else if (c == '?')
			return -1;
		/* -j: each rank correlates on one thread; --mpi: how the CLI got here */
	}
	if (optind != argc - 1)
		return -1;
	a->dir = argv[optind];
	return 0;
}

static long peak_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

static void fail(int rank, const char *what)
{
	fprintf(stderr, "callpath analyze --mpi: rank %d: %s: %s\n", rank, what,
		cp_error_message());
	MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Rank 0: the finished database written. */
static void write_db(struct cp_analysis *a, struct cp_db *db, const struct args *args, int size,
		     double t0)
{
	if (cp_analysis_end(a))
		fail(0, "finishing the database");
	struct strbuf path;
	strbuf_init(&path);
	if (args->out)
		strbuf_addstr(&path, args->out);
	else
		strbuf_addf(&path, "%s/%s", args->dir, CP_DB_DEFAULT_NAME);
	if (cp_db_write(db, path.buf))
		fail(0, "writing the database");
	/* The waits by synchronization object (MPI communicators and tags, -e wait's
	 * objects): read from the directory again on rank 0, as `callpath analyze` does. */
	if (cp_db_save_sync_if_waits(db, args->dir, path.buf)) {
		fprintf(stderr, "warning: waits by synchronization object not saved: %s\n",
			cp_error_message());
		cp_error_clear();
	}
	if (!args->quiet) {
		for (size_t i = 0; i < db->run.nwarnings; i++)
			fprintf(stderr, "warning: %s\n", db->run.warnings[i]);
		printf("%s: %zu contexts, %zu profiles (%zu process%s), %zu metrics, on %d "
		       "ranks in %.2f s\n",
		       path.buf, db->nscopes, db->nprofiles, db->run.nprocs,
		       db->run.nprocs == 1 ? "" : "es", db->nmetrics, size, MPI_Wtime() - t0);
	}
	strbuf_release(&path);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double t0 = MPI_Wtime();
	struct args args = {0};
	args.derived = xcalloc((size_t)argc + 1, sizeof *args.derived);
	if (parse_args(argc, argv, &args)) {
		if (rank == 0)
			fprintf(stderr, "usage: [mpirun -np K] callpath analyze --mpi DIR [-o DB] "
					"[--metric NAME=FORMULA]... [-q]\n");
		MPI_Finalize();
		return 2;
	}
	struct cp_analyze_options o;
	cp_analyze_options_init(&o);
	o.jobs = 1;
	o.defer_finish = 1; /* cp_db_write finishes it beside writing */
	o.progress = args.quiet || rank ? NULL : stderr;
	o.derived = args.derived;
	o.nderived = args.nderived;
	struct cp_db db;
	struct cp_analysis *a;
	if (cp_analysis_begin(&a, args.dir, &o, rank == 0 ? &db : NULL))
		fail(rank, args.dir);
	if (rank)
		cp_db_init(&db);
	size_t shared_size;
	void *shared = cp_analysis_shared(a, &shared_size);
	MPI_Bcast(shared, (int)shared_size, MPI_BYTE, 0, MPI_COMM_WORLD);
	size_t n = cp_analysis_nimages(a), lo = n * (size_t)rank / (size_t)size,
	       hi = n * (size_t)(rank + 1) / (size_t)size;
	double t1 = MPI_Wtime();
	if (cp_analysis_images(a, lo, hi, &db))
		fail(rank, "correlating");
	double t2 = MPI_Wtime();
	size_t nprof = db.nprofiles, nscopes = db.nscopes;
	long mb = peak_mb();
	struct reduce_stats rs = {0};
	if (mpi_reduce_db(MPI_COMM_WORLD, &db, &rs))
		fail(rank, "merging");
	if (!args.quiet)
		fprintf(stderr,
			"callpath analyze --mpi: rank %d/%d: images %zu-%zu, %zu profiles, %zu "
			"scopes; correlate %.2f s, reduce %.2f s (sent %.1f MB, received %.1f "
			"MB); peak RSS %ld MB before the reduction, %ld MB after\n",
			rank, size, lo, hi, nprof, nscopes, t2 - t1, rs.seconds,
			(double)rs.sent / 1e6, (double)rs.received / 1e6, mb, peak_mb());
	if (rank == 0)
		write_db(a, &db, &args, size, t0);
	if (rank == 0)
		cp_db_release(&db);
	cp_analysis_free(a);
	free(args.derived);
	MPI_Finalize();
	return 0;
}
