#include "cli/cli.h"
#include "base/error.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"record", cmd_record, "run a program and sample its calling contexts"},
    {"attach", cmd_attach, "sample a running process without stopping or changing it"},
    {"probe", cmd_probe, "count and time only the functions you name, per call path"},
    {"search", cmd_search, "find a running program's bottlenecks on its own, down to loops"},
    {"gprof", cmd_gprof, "gprof without recompiling: write a gmon.out for a program"},
    {"analyze", cmd_analyze, "correlate a measurement with program structure into a database"},
    {"report", cmd_report, "show a profile: top-down, bottom-up or flat"},
    {"top", cmd_top, "interactive terminal view of a running or finished measurement"},
    {"diff", cmd_diff, "compare two profiles per calling context: regressions first"},
    {"view", cmd_view, "show a profile in a web browser (or as one HTML file)"},
    {"export", cmd_export, "write a profile for callgrind, pprof, speedscope, gprof, flame graphs"},
    {"struct", cmd_struct, "recover procedures, inlined code, loops and lines of binaries"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: callpath [--version] [--help] COMMAND [ARGS...]\n\n"
		     "A call-path profiler for unmodified native programs.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nRun 'callpath COMMAND --help' for a command's options.\n"
		     "Quick start: callpath record ./app   (records, then prints the profile)\n");
}

void cli_error(const char *cmd, const char *fmt, ...)
{
	fprintf(stderr, "callpath %s: ", cmd);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	} else {
		fputs(cp_error_message(), stderr);
	}
	fputc('\n', stderr);
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	char spec[128];
	int stop = *shortopts == '+';
	/* ':' first (after '+'): a missing value is told apart from an unknown option */
	snprintf(spec, sizeof spec, "%s:%s", stop ? "+" : "", shortopts + stop);
	opterr = 0;
	int c = getopt_long(argc, argv, spec, longopts, NULL);
	const char *opt = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
	if (c == '?' && optopt && !(opt[0] == '-' && opt[1] == '-'))
		cli_error(cmd, "unknown option '-%c' (see callpath %s --help)", optopt, cmd);
	else if (c == '?')
		cli_error(cmd, "unknown option '%s' (see callpath %s --help)", opt, cmd);
	else if (c == ':')
		cli_error(cmd, "option '%s' needs a value", opt);
	return c == ':' ? '?' : c;
}

int cli_usage(const char *usage_text, int c)
{
	fputs(usage_text, c == 'h' ? stdout : stderr);
	return c == 'h' ? 1 : -1;
}

int cli_bad_value(const char *cmd, const char *arg, const char *option)
{
	cli_error(cmd, "invalid value '%s' for --%s (see callpath %s --help)", arg, option, cmd);
	return -1;
}

int cli_bad_option(const char *cmd, const char *arg, const struct option *longopts, int c)
{
	while (longopts->name && longopts->val != c)
		longopts++;
	return cli_bad_value(cmd, arg, longopts->name ? longopts->name : "?");
}

int cli_parse_args(const char *cmd, int argc, char **argv, const char *shortopts,
		   const struct option *longopts, int (*parse)(int c, const char *arg, void *ctx),
		   void *ctx)
{
	int c;
	optind = 1;
	while ((c = cli_getopt(cmd, argc, argv, shortopts, longopts)) != -1) {
		int rc = parse(c, optarg, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

FILE *cli_output(const char *cmd, const char *path)
{
	FILE *out = path ? fopen(path, "w") : stdout;
	if (!out)
		cli_error(cmd, "cannot write %s: %m", path);
	return out;
}

int cli_output_close(const char *cmd, FILE *out, const char *path, int rc)
{
	if (out != stdout && fclose(out) && !rc) {
		cli_error(cmd, "error writing %s", path);
		return CLI_EXIT_FAILURE;
	}
	if (rc) {
		cli_error(cmd, NULL);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_FAILURE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("callpath %s\n", CALLPATH_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "callpath: '%s' is not a command. See 'callpath --help'.\n", argv[1]);
	return CLI_EXIT_FAILURE;
}
