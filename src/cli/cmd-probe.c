/* callpath probe -f PATTERN... [-e EVENT] [-o DIR] [-q] [--list] [--] PROGRAM [ARGS...]
 *
 * Entry/exit probes on the functions matching the patterns (docs/cmd-probe.md): the
 * patterns go to the runtime in CALLPATH_PROBES, which patches the matching functions of
 * every load module; the run itself is `callpath record`'s (same measurement directory,
 * same summary), with sampling only when -e is given. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_MAX_ARGS 64

static void probe_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: callpath probe -f PATTERN [-f PATTERN...] [options] [--] PROGRAM [ARGS...]\n"
	    "\n"
	    "Counts the calls of the matching functions and measures their wall time (TSC),\n"
	    "per calling context, in the executable and every shared library (also those\n"
	    "loaded later with dlopen). No recompiling: function entries are patched at run\n"
	    "time.\n"
	    "\n"
	    "  -f, --function PATTERN  glob over symbol names ('work', 'MPI_*'), or\n"
	    "                          MODULE:GLOB to restrict it to load modules whose file\n"
	    "                          name matches MODULE ('libfoo.so*:init'); repeatable\n"
	    "  -e, --event EVENT       also sample EVENT (as callpath record -e); repeatable\n"
	    "  -o, --output DIR        measurement directory\n"
	    "  -q, --quiet             no summary at the end\n"
	    "  -h, --help              this help\n"
	    "\n"
	    "Metrics: calls (entries), probe-time (ns, exclusive per probed activation; a\n"
	    "context's inclusive value is the probed function's inclusive wall time).\n"
	    "Functions that cannot be patched safely are listed as notes in the profile.\n");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"function", required_argument, 0, 'f'}, {"event", required_argument, 0, 'e'},
	    {"output", required_argument, 0, 'o'},   {"quiet", no_argument, 0, 'q'},
	    {"help", no_argument, 0, 'h'},	     {0, 0, 0, 0},
	};
	char *rargv[PROBE_MAX_ARGS + 8];
	char patterns[8192] = "";
	int rargc = 0, nevents = 0, c;
	rargv[rargc++] = "record";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:e:o:qh", longopts, NULL)) != -1) {
		if (rargc >= PROBE_MAX_ARGS) {
			cli_error("probe", "too many options");
			return CLI_EXIT_FAILURE;
		}
		switch (c) {
		case 'f':
			if (!*optarg || strchr(optarg, ';') ||
			    strlen(patterns) + strlen(optarg) + 2 > sizeof patterns) {
				cli_error("probe",
					  "bad pattern '%s' (empty, too long or contains ';')",
					  optarg);
				return CLI_EXIT_FAILURE;
			}
			if (*patterns)
				strcat(patterns, ";");
			strcat(patterns, optarg);
			break;
		case 'e':
			rargv[rargc++] = "-e";
			rargv[rargc++] = optarg;
			nevents++;
			break;
		case 'o':
			rargv[rargc++] = "-o";
			rargv[rargc++] = optarg;
			break;
		case 'q':
			rargv[rargc++] = "-q";
			break;
		case 'h':
			probe_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'callpath probe --help' for the options.\n");
			return CLI_EXIT_FAILURE;
		}
	}
	if (!*patterns) {
		cli_error("probe", "no function given: use -f PATTERN (see --help)");
		return CLI_EXIT_FAILURE;
	}
	if (optind >= argc) {
		cli_error("probe", "no program given; usage: callpath probe -f PATTERN [options] "
				   "[--] PROGRAM [ARGS...]");
		return CLI_EXIT_FAILURE;
	}
	if (argc - optind > PROBE_MAX_ARGS) {
		cli_error("probe", "too many program arguments");
		return CLI_EXIT_FAILURE;
	}
	rargv[rargc++] = "--";
	for (int i = optind; i < argc; i++)
		rargv[rargc++] = argv[i];
	rargv[rargc] = NULL;
	setenv("CALLPATH_PROBES", patterns, 1);
	setenv("CALLPATH_PROBE_ONLY", nevents ? "0" : "1", 1);
	return cmd_record(rargc, rargv);
}
