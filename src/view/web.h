/* `callpath view`: the profile in a web browser, served over HTTP by libmicrohttpd (the only
 * module that uses it) or written as one self-contained HTML file. The API and the security
 * model are in docs/cmd-view.md. */
#ifndef CP_VIEW_WEB_H
#define CP_VIEW_WEB_H

#include <stddef.h>
#include <stdio.h>

struct cp_web_options {
	const char *path;  /* a profile database or a measurement directory */
	const char *bind;  /* listening address, default "127.0.0.1" */
	unsigned port;	   /* 0 = any free port */
	int open_browser;  /* run xdg-open on the URL (when there is a display) */
	FILE *progress;	   /* analyze's progress and the server's messages (stderr) */
	FILE *url_out;	   /* where the URL is printed (stdout) */
	size_t html_nodes; /* --html: nodes per view (0 = default) */
};

void cp_web_options_init(struct cp_web_options *o);
/* Serves until SIGINT or SIGTERM. 0 or a negative CP_E* code with cp_error() set. */
int cp_web_serve(const struct cp_web_options *o);
/* Writes the self-contained HTML file of the profile to out. */
int cp_web_write_html(const struct cp_web_options *o, FILE *out);

#endif
