/* callpath export: write a profile in the formats of other tools (docs/cmd-export.md). */
#include "cli/cli.h"

#include "base/error.h"
#include "db/analyze.h"
#include "export/export.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: callpath export PATH --format FORMAT [-o FILE] [--metric NAME]\n\n"
	    "Writes the profile PATH (a database, or a measurement directory, analyzed\n"
	    "first) for another tool:\n\n"
	    "  callgrind    callgrind_annotate, KCachegrind     (default callgrind.out.callpath)\n"
	    "  pprof        go tool pprof (gzipped profile.proto) (default profile.pb.gz)\n"
	    "  folded       flamegraph.pl, speedscope (a;b;c N)  (default profile.folded)\n"
	    "  speedscope   speedscope JSON                      (default "
	    "profile.speedscope.json)\n"
	    "  gmon         GNU gprof (gmon.out of the main executable) (default gmon.out)\n\n"
	    "  -f, --format FORMAT  one of the above\n"
	    "  -o, --output FILE    output file ('-' = standard output)\n"
	    "  --metric NAME        the metric of single-metric formats (folded, speedscope,\n"
	    "                       gmon) and pprof's default; default: the first time metric\n\n"
	    "Views as CSV or JSON: callpath report --format csv|json.\n");
}

/* Writes the profile path in format to out (NULL: the format's default file). */
static int export_run(const char *path, const char *format, const char *out, const char *metric)
{
	int f = cp_export_format_parse(format);
	if (f < 0) {
		cli_error("export",
			  "unknown format '%s' (callgrind, pprof, folded, speedscope or gmon)",
			  format);
		return CLI_EXIT_FAILURE;
	}
	struct cp_db db;
	if (cp_profile_open(path, NULL, &db)) {
		cli_error("export", NULL);
		return CLI_EXIT_FAILURE;
	}
	int status = CLI_EXIT_FAILURE;
	struct cp_export_options o;
	cp_export_options_init(&o);
	if (metric) {
		o.metric = cp_db_metric_find(&db, metric);
		if (o.metric == CP_DB_NONE) {
			cli_error("export", "no metric '%s' in %s", metric, path);
			goto out;
		}
	}
	if (!out)
		out = cp_export_default_file((enum cp_export_format)f);
	if (cp_export_write(&db, (enum cp_export_format)f, &o, out)) {
		cli_error("export", NULL);
		goto out;
	}
	if (strcmp(out, "-"))
		fprintf(stderr, "callpath export: %s written (%s)\n", out, format);
	status = 0;
out:
	cp_db_release(&db);
	return status;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"format", required_argument, 0, 'f'},
	    {"output", required_argument, 0, 'o'},
	    {"metric", required_argument, 0, 'm'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	const char *path = NULL, *format = NULL, *out = NULL, *metric = NULL;
	int c;
	optind = 1;
	while ((c = cli_getopt("export", argc, argv, "f:o:h", longopts)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'm':
			metric = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default: /* said by cli_getopt */
			return CLI_EXIT_FAILURE;
		}
	}
	if (argc - optind > 1) {
		cli_error("export", "one profile only (got %s and %s)", argv[optind],
			  argv[optind + 1]);
		return CLI_EXIT_FAILURE;
	}
	path = optind < argc ? argv[optind] : NULL;
	if (!path || !format) {
		usage(stderr);
		return CLI_EXIT_FAILURE;
	}
	return export_run(path, format, out, metric);
}
