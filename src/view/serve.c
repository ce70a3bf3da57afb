/* `callpath view PATH`: the profile opened (a measurement directory analyzed first), the
 * listening socket, the URL with its token, the browser, and the live refresh. */
#include "view/server-impl.h"

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "db/analyze.h"
#include "db/sources.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void cp_web_options_init(struct cp_web_options *o)
{
	memset(o, 0, sizeof *o);
	o->bind = "127.0.0.1";
	o->progress = stderr;
	o->url_out = stdout;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int is_dir(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* A new file name in s->tmpdir (made on first use). */
static int tmp_db_path(struct cp_web_server *s, char **out)
{
	if (!s->tmpdir) {
		const char *t = getenv("TMPDIR");
		struct strbuf b;
		strbuf_init(&b);
		strbuf_addf(&b, "%s/callpath-view-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(b.buf)) {
			int rc = cp_error(CP_EIO, "view: cannot make a directory %s: %s", b.buf,
					  strerror(errno));
			strbuf_release(&b);
			return rc;
		}
		s->tmpdir = strbuf_detach(&b);
	}
	struct strbuf p;
	strbuf_init(&p);
	strbuf_addf(&p, "%s/view-%u.db", s->tmpdir, s->tmp_serial++);
	*out = strbuf_detach(&p);
	return 0;
}

/* Writes db to a new file of s->tmpdir. */
static int write_tmp(struct cp_web_server *s, struct cp_db *db, char **out)
{
	int rc = tmp_db_path(s, out);
	if (!rc && (rc = cp_db_write(db, *out))) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

/* Analyzes s->dir and writes the database to a new file of s->tmpdir. */
static int analyze_to_tmp(struct cp_web_server *s, FILE *progress, char **out)
{
	struct cp_analyze_options ao;
	cp_analyze_options_init(&ao);
	ao.progress = progress;
	struct cp_db db;
	memset(&db, 0, sizeof db);
	int rc = cp_analyze_dir(s->dir, &ao, &db);
	if (!rc)
		rc = write_tmp(s, &db, out);
	cp_db_release(&db);
	return rc;
}

int cp_web_open_profile(struct cp_web_server *s, const struct cp_web_options *o)
{
	if (!is_dir(o->path)) {
		s->dbpath = xstrdup(o->path);
		return cp_web_model_open(&s->model, s->dbpath, o->path);
	}
	s->dir = xstrdup(o->path);
	struct cp_analyze_options ao;
	cp_analyze_options_init(&ao);
	ao.progress = o->progress;
	struct cp_db db;
	memset(&db, 0, sizeof db);
	int rc = cp_profile_open(o->path, &ao, &db); /* writes DIR/callpath.db when it can */
	struct strbuf p;
	strbuf_init(&p);
	strbuf_addf(&p, "%s/%s", o->path, CP_DB_DEFAULT_NAME);
	if (!rc && cp_db_sources_current(o->path, p.buf))
		s->dbpath = strbuf_detach(&p);
	else if (!rc) /* not writable, or changing while it runs */
		rc = write_tmp(s, &db, &s->dbpath);
	strbuf_release(&p);
	cp_db_release(&db);
	if (rc)
		return rc;
	s->api.live = !cp_db_sources_current(o->path, s->dbpath);
	return cp_web_model_open(&s->model, s->dbpath, o->path);
}

void cp_web_close_profile(struct cp_web_server *s)
{
	cp_web_model_release(&s->model);
	if (s->tmpdir) {
		for (unsigned i = 0; i < s->tmp_serial; i++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/view-%u.db", s->tmpdir, i);
			unlink(p);
		}
		rmdir(s->tmpdir);
	}
	free(s->tmpdir);
	free(s->dir);
	free(s->dbpath);
	s->tmpdir = s->dir = s->dbpath = NULL;
}

/* The refresh thread: analyzes the directory again without the lock (requests go on
 * with the old database), then swaps the model under it. s->dbpath changes only here and
 * one refresh runs at a time (s->refreshing), so reading it unlocked is safe. */
static void *refresh_run(void *arg)
{
	struct cp_web_server *s = arg;
	struct cp_web_async *a = &s->async;
	char *fresh = NULL;
	int rc = cp_db_sources_current(s->dir, s->dbpath) ? 1 : analyze_to_tmp(s, NULL, &fresh);
	pthread_mutex_lock(&a->lock);
	if (!rc && !cp_web_model_reopen(&s->model, fresh)) {
		if (s->tmpdir && !strncmp(s->dbpath, s->tmpdir, strlen(s->tmpdir)))
			unlink(s->dbpath);
		free(s->dbpath);
		s->dbpath = fresh;
		fresh = NULL;
		s->api.live = 1;
	}
	s->refreshing = 0;
	if (--a->jobs == 0)
		pthread_cond_broadcast(&a->idle);
	pthread_mutex_unlock(&a->lock);
	free(fresh); /* a temporary file: removed with the directory */
	cp_error_clear();
	return NULL;
}

void cp_web_live_check(struct cp_web_server *s)
{
	uint64_t t = now_ms();
	if (!s->dir || s->refreshing || t - s->last_check_ms < 2000)
		return;
	s->last_check_ms = t;
	if (!cp_web_spawn(refresh_run, s)) {
		s->refreshing = 1;
		s->async.jobs++;
	}
}

/* ---- the socket, the token, the browser --------------------------------------------- */

static int listen_on(const char *addr, unsigned port, unsigned *bound)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	char host[256];
	snprintf(host, sizeof host, "%s", addr);
	size_t hl = strlen(host);
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	socklen_t len;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		len = sizeof *a4;
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		len = sizeof *a6;
	} else {
		return cp_error(CP_EINVAL, "--bind: '%s' is not an IPv4 or IPv6 address", addr);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd < 0)
		return cp_error(CP_EIO, "view: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		int e = errno;
		close(fd);
		return cp_error(CP_EIO, "view: cannot listen on %s port %u: %s", addr, port,
				strerror(e));
	}
	len = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*bound = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
	return fd;
}

static int make_token(char *out)
{
	unsigned char r[16];
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = getrandom(r + got, sizeof r - got, 0);
		if (n < 0 && errno != EINTR)
			return cp_error(CP_EIO, "view: getrandom: %s", strerror(errno));
		got += n > 0 ? (size_t)n : 0;
	}
	for (size_t i = 0; i < sizeof r; i++)
		sprintf(out + 2 * i, "%02x", r[i]);
	return 0;
}

static void open_browser(const char *url, FILE *progress)
{
	const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
	if (!(d && *d) && !(w && *w))
		return;
	char *argv[] = {"xdg-open", (char *)url, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	if (posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ) && progress)
		fprintf(progress, "callpath view: cannot run xdg-open; open the URL yourself\n");
	posix_spawn_file_actions_destroy(&fa);
}

static void print_url(const struct cp_web_server *s, FILE *out, char *url, size_t len)
{
	const char *host = s->bind;
	int v6 = strchr(host, ':') && host[0] != '[';
	if (!strcmp(host, "0.0.0.0"))
		host = "127.0.0.1";
	else if (!strcmp(host, "::") || !strcmp(host, "[::]"))
		host = "::1";
	snprintf(url, len, "http://%s%s%s:%u/?token=%s", v6 ? "[" : "", host, v6 ? "]" : "",
		 s->port, s->token);
	if (out) {
		fprintf(out, "%s\n", url);
		fflush(out);
	}
}

/* Blocks SIGINT/SIGTERM (so that the server's thread does not take them) and waits. */
static void wait_for_signal(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	int sig;
	sigwait(&set, &sig);
}

int cp_web_serve(const struct cp_web_options *o)
{
	struct cp_web_server s;
	memset(&s, 0, sizeof s);
	s.bind = s.api.bind = o->bind ? o->bind : "127.0.0.1";
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	int rc = make_token(s.token), fd = -1;
	cp_web_async_init(&s.async);
	if (!rc)
		rc = cp_web_open_profile(&s, o);
	s.model.async = &s.async;
	if (!rc && (fd = listen_on(s.bind, o->port, &s.port)) < 0)
		rc = fd;
	if (!rc) {
		snprintf(s.cookie_name, sizeof s.cookie_name, "callpath_%u", s.port);
		rc = cp_web_http_start(&s, fd);
	}
	if (!rc) {
		char url[512];
		print_url(&s, o->url_out, url, sizeof url);
		if (o->progress)
			fprintf(o->progress, "callpath view: serving %s%s (Ctrl-C to stop)\n",
				o->path, s.api.live ? " (live: refreshes while it changes)" : "");
		if (o->open_browser)
			open_browser(url, o->progress);
		wait_for_signal();
		cp_web_http_stop(&s);
	}
	if (fd >= 0)
		close(fd);
	cp_web_async_release(&s.async); /* waits for the load jobs */
	cp_web_close_profile(&s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
