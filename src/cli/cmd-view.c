/* callpath view: the profile in a web browser (docs/cmd-view.md). */
#include "cli/cli.h"

#include "base/error.h"
#include "view/web.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: callpath view [PATH] [--port N] [--bind ADDR] [--no-open]\n"
		"       callpath view --html FILE [--html-nodes N] [PATH]\n\n"
		"Shows the profile PATH (a database, or a measurement directory analyzed first;\n"
		"default: .) in a web browser: top-down, bottom-up and flat views, source, flame\n"
		"graph, call graph, threads. Serves it on http://127.0.0.1 with a random token in\n"
		"the URL printed, or writes one self-contained HTML file (--html).\n\n"
		"  --port N        TCP port (default: a free one)\n"
		"  --bind ADDR     listen on ADDR (default 127.0.0.1; see docs/cmd-view.md for\n"
		"                  login nodes and SSH tunnels)\n"
		"  --no-open       only print the URL, do not start a browser\n"
		"  --html FILE     write the self-contained HTML file (- = stdout) and exit\n"
		"  --html-nodes N  at most N nodes per view in the file (default 100000)\n");
}

static int parse_num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > max || *s == '-')
		return -1;
	*out = v;
	return 0;
}

int cmd_view(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"port", required_argument, NULL, 'p'},
	    {"bind", required_argument, NULL, 'b'},
	    {"no-open", no_argument, NULL, 'n'},
	    {"html", required_argument, NULL, 'H'},
	    {"html-nodes", required_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cp_web_options o;
	cp_web_options_init(&o);
	o.open_browser = 1;
	const char *html = NULL;
	unsigned long v;
	int c;
	optind = 1;
	while ((c = cli_getopt("view", argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'p':
			if (parse_num(optarg, 65535, &v)) {
				cli_error("view", "--port: '%s' is not a port number", optarg);
				return CLI_EXIT_FAILURE;
			}
			o.port = (unsigned)v;
			break;
		case 'b':
			o.bind = optarg;
			break;
		case 'n':
			o.open_browser = 0;
			break;
		case 'H':
			html = optarg;
			break;
		case 'N':
			if (parse_num(optarg, 10000000, &v) || !v) {
				cli_error("view", "--html-nodes: '%s' is not a positive number",
					  optarg);
				return CLI_EXIT_FAILURE;
			}
			o.html_nodes = v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return CLI_EXIT_FAILURE;
		}
	}
	if (argc - optind > 1) {
		cli_error("view", "one PATH at most (see callpath view --help)");
		return CLI_EXIT_FAILURE;
	}
	o.path = optind < argc ? argv[optind] : ".";
	int rc;
	if (html) {
		FILE *out = strcmp(html, "-") ? fopen(html, "w") : stdout;
		if (!out) {
			cli_error("view", "cannot write %s: %s", html, strerror(errno));
			return CLI_EXIT_FAILURE;
		}
		rc = cp_web_write_html(&o, out);
		if (out != stdout && fclose(out) && !rc)
			rc = cp_error(CP_EIO, "writing %s: %s", html, strerror(errno));
	} else {
		rc = cp_web_serve(&o);
	}
	if (rc) {
		cli_error("view", NULL);
		return CLI_EXIT_FAILURE;
	}
	return 0;
}
