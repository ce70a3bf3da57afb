/* Private to src/view/: the running server (server.c: HTTP; serve.c: the profile, the
 * socket, the live refresh). */
#ifndef CP_VIEW_SERVER_IMPL_H
#define CP_VIEW_SERVER_IMPL_H

#include "view/api.h"
#include "view/model.h"
#include "view/web.h"

#include <stdint.h>

struct MHD_Daemon;

struct cp_web_server {
	struct cp_web_model model;
	struct cp_web_async async; /* model.async: its lock guards the model */
	struct cp_web_api_state api;
	const char *bind;
	unsigned port;
	char token[33];	      /* 128 bits in hex */
	char cookie_name[32]; /* callpath_PORT */
	char *dir;	      /* a measurement directory (live refresh), or NULL */
	char *tmpdir;	      /* where databases of a directory we may not write go */
	char *dbpath;	      /* the database served */
	uint64_t last_check_ms;
	int refreshing; /* a refresh thread runs (guarded by async.lock) */
	unsigned tmp_serial;
	struct MHD_Daemon *daemon;
};

int cp_web_http_start(struct cp_web_server *s, int listen_fd);
void cp_web_http_stop(struct cp_web_server *s);
/* On a live measurement directory, with async.lock held: starts a thread that analyzes it
 * again when its files changed (at most every 2 s) and then replaces the model. */
void cp_web_live_check(struct cp_web_server *s);
/* Opens o->path as a database file for the model: the file itself, or the database of a
 * measurement directory (analyzed first; written to a temporary directory when the
 * measurement directory cannot hold it). Fills s->dir, s->dbpath, s->tmpdir. */
int cp_web_open_profile(struct cp_web_server *s, const struct cp_web_options *o);
void cp_web_close_profile(struct cp_web_server *s);

#endif
