/* The callpath command table (git's builtin.h). To add a command:
 *   1. write src/cli/cmd-NAME.c with `int cmd_NAME(int argc, char **argv)` (argv[0] = "NAME")
 *      that parses its options with cli_getopt(), handles --help, returns the process exit
 *      status, and prints errors with cli_error(); the work itself is a library call
 *      (record: cp_record_run() in src/record; never another command's cmd_NAME);
 *   2. declare it here and add a row to commands[] in main.c;
 *   3. document it in docs/cmd-NAME.md. */
#ifndef CP_CLI_H
#define CP_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_struct(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_gprof(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_search(int argc, char **argv);

/* Shared by record and probe (cmd-record.c). cli_record_event: one -e EVENT[@PERIOD],
 * checked (perf events resolved) and added to o; cli_record_events_check: after the last
 * one, whether the perf events fit the PMU together. Both print their errors (-1).
 * cli_record_runtime: o->runtime = the runtime (cli_runtime_lib) in buf; -1 after saying
 * why. cli_record_run: runs o (its runtime found here), prints the summary, analyzes;
 * returns the exit status (the program's; 127 when it cannot run; CLI_EXIT_FAILURE). */
struct cp_record_opts;
int cli_record_event(const char *cmd, struct cp_record_opts *o, const char *spec);
int cli_record_events_check(const char *cmd, struct cp_record_opts *o, int quiet);
int cli_record_runtime(const char *cmd, struct cp_record_opts *o, char *buf, size_t size);
int cli_record_run(struct cp_record_opts *o, int quiet, int no_analyze);

/* getopt_long for every command (optind = 1 before the first call): returns the option,
 * -1 at the end, or '?' for an unknown option or a missing value, said already as
 * "callpath CMD: unknown option ..." / "... needs a value". shortopts may start with '+'
 * (stop at the first operand: the program of record, probe, gprof). */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/* Option values of the report's views (view-options.c), for report and diff. cli_parse_enum:
 * *out = the index of arg in names, or -1. cli_parse_metrics: --metric A,B,C=FORMULA (split
 * at commas outside parentheses). cli_parse_sort: inclusive|exclusive|name or
 * NAME[:incl|excl]. Each 0, or -1 for a bad value; cli_options_free frees the copies the
 * options point into (at the command's end). */
struct cp_report_options;
int cli_parse_enum(const char *arg, const char *const *names, int n, int *out);
int cli_parse_metrics(const char *arg, struct cp_report_options *o);
int cli_parse_sort(const char *arg, struct cp_report_options *o);
void cli_options_free(void);
/* The view options report and diff share: their getopt codes (each command's own start at
 * CLI_OPT_VIEW_END), their long options (CLI_VIEW_LONG_OPTS, first in each command's
 * table), and cli_view_option, which applies option c to o (--view: the first nviews of
 * top-down, bottom-up, flat, sync): 0, -1 for a bad value, 1 when c is not one of them. */
enum {
	CLI_OPT_VIEW = 256,
	CLI_OPT_METRIC,
	CLI_OPT_SORT,
	CLI_OPT_THRESHOLD,
	CLI_OPT_DEPTH,
	CLI_OPT_FOCUS,
	CLI_OPT_FLATTEN,
	CLI_OPT_ASCII,
	CLI_OPT_NO_SUMMARY,
	CLI_OPT_VIEW_END
};
/* clang-format off */
#define CLI_VIEW_LONG_OPTS \
	{"view", required_argument, 0, CLI_OPT_VIEW}, \
	{"metric", required_argument, 0, CLI_OPT_METRIC}, \
	{"sort", required_argument, 0, CLI_OPT_SORT}, \
	{"threshold", required_argument, 0, CLI_OPT_THRESHOLD}, \
	{"depth", required_argument, 0, CLI_OPT_DEPTH}, \
	{"focus", required_argument, 0, CLI_OPT_FOCUS}, \
	{"flatten", required_argument, 0, CLI_OPT_FLATTEN}, \
	{"ascii", no_argument, 0, CLI_OPT_ASCII}, \
	{"no-summary", no_argument, 0, CLI_OPT_NO_SUMMARY}
/* clang-format on */
int cli_view_option(int c, const char *arg, struct cp_report_options *o, int nviews);
/* The option loop of report and diff (-o FILE, -h, the view options, then the command's
 * own through option(c, arg, ctx): 0, -1 for a bad value, 1 when unknown); errors said as
 * every command says them. Returns 0, 1 after --help, -1 after an error. */
struct cli_view_cmd {
	const char *name, *usage;
	const struct option *longopts;
	int (*option)(int c, const char *arg, void *ctx);
	void *ctx;
	struct cp_report_options *o;
	int nviews;	     /* --view names accepted (cli_view_option) */
	const char *outpath; /* -o, NULL when not given */
};
int cli_view_cmd_parse(struct cli_view_cmd *cmd, int argc, char **argv);

/* The output of -o path (stdout when NULL), or NULL after saying why. cli_output_close:
 * closes it after the work returned rc (0 or a CP_E* code), says what failed and returns
 * the exit status. */
FILE *cli_output(const char *cmd, const char *path);
int cli_output_close(const char *cmd, FILE *out, const char *path, int rc);

/* The end of a command's option switch: for -h (c == 'h') the usage on stdout, 1; for an
 * unknown option (said already by cli_getopt) the usage on stderr, -1. */
int cli_usage(const char *usage_text, int c);
/* "callpath CMD: invalid value 'ARG' for --OPTION (see callpath CMD --help)"; -1. */
int cli_bad_value(const char *cmd, const char *arg, const char *option);
/* cli_bad_value for the option whose getopt code is c in longopts. */
int cli_bad_option(const char *cmd, const char *arg, const struct option *longopts, int c);
/* The option loop (optind reset first): each option goes to parse(c, optarg, ctx), which
 * returns 0, 1 (after --help) or -1 (after an error); the first nonzero ends the loop and is
 * returned, else 0. */
int cli_parse_args(const char *cmd, int argc, char **argv, const char *shortopts,
		   const struct option *longopts, int (*parse)(int c, const char *arg, void *ctx),
		   void *ctx);

/* Prints "callpath NAME: message" (message from cp_error_message() when fmt is NULL). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* attach --inject (attach-inject.c): loads the runtime into pid measuring into outdir
 * (absolute), waits, detaches. 0 (*ended: the process ended meanwhile), or -1 with
 * cp_error() set. */
int cli_attach_inject(pid_t pid, const char *outdir, const char *events, double seconds, int quiet,
		      int *ended);
/* Exit status used for failures of callpath itself (not of the profiled program). */
#define CLI_EXIT_FAILURE 2
/* The runtime preloaded into measured programs. */
#define CLI_RUNTIME_LIB "libcallpath-rt.so"
/* `analyze --mpi`'s program, installed beside the runtime (src/mpi-analyze). */
#define CLI_ANALYZE_MPI "callpath-analyze-mpi"
/* Writes the path of a library callpath preloads (CLI_RUNTIME_LIB, ...) to path: from
 * CALLPATH_RT, else relative to the real path of the callpath executable (installed or build
 * tree). Returns 0, or CP_ENOENT with a message saying where it looked. */
int cli_runtime_lib(const char *name, char *path, size_t size);

#endif
