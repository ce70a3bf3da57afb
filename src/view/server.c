/* The HTTP server of `callpath view` (libmicrohttpd, a thread per connection: the front end's
 * files are served at any time; API requests take the model's lock (one SQLite connection),
 * and what needs the whole profile in memory loads on a thread of its own (model-full.c)
 * while the request gets a 202 "loading" answer). Security
 * (docs/cmd-view.md, "Security"): Host check, token (parameter, header or cookie), GET and
 * HEAD only, no bodies, bounded URLs and parameters, security headers on every answer. */
#include "view/server-impl.h"

#include "base/error.h"
#include "base/xalloc.h"
#include "view/assets.h"

#include <microhttpd.h>
#include <pthread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSP                                                                                        \
	"default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' " \
	"data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

static void add_headers(struct MHD_Response *r, const char *type)
{
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Content-Security-Policy", CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Cache-Control", "no-store");
}

static enum MHD_Result send_buf(struct MHD_Connection *conn, int status, const char *type,
				const void *data, size_t len, int copy)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    len, (void *)data, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	add_headers(r, type);
	if (status == 202)
		MHD_add_response_header(r, "Retry-After", "1");
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, int status, const char *msg)
{
	struct cp_web_resp resp;
	cp_web_resp_init(&resp);
	cp_web_resp_error(&resp, status, "%s", msg);
	enum MHD_Result r = send_buf(conn, status, resp.type, resp.body.buf, resp.body.len, 1);
	cp_web_resp_release(&resp);
	return r;
}

struct args {
	struct cp_web_req *req;
	char err[512];
	int bad;
};

static enum MHD_Result each_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				size_t key_size, const char *value, size_t value_size)
{
	struct args *a = cls;
	if (!a->bad &&
	    ((key && strlen(key) != key_size) || (value && strlen(value) != value_size))) {
		snprintf(a->err, sizeof a->err, "a parameter holds a NUL byte");
		a->bad = 1;
	}
	if (!a->bad && cp_web_req_set(a->req, key, value, a->err, sizeof a->err))
		a->bad = 1;
	return a->bad ? MHD_NO : MHD_YES;
}

/* The token of the request: parameter, header or cookie; NULL when none. */
static const char *request_token(struct cp_web_server *s, struct MHD_Connection *conn, char *buf,
				 size_t len)
{
	const char *t = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
	if (t)
		return t;
	t = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Callpath-Token");
	if (t)
		return t;
	const char *cookie = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Cookie");
	if (cookie && !cp_web_cookie_get(cookie, s->cookie_name, buf, len))
		return buf;
	return NULL;
}

/* The URL with the token: the cookie is set and the browser sent to "/". */
static enum MHD_Result login(struct cp_web_server *s, struct MHD_Connection *conn)
{
	static const char body[] = "callpath view: continue at /\n";
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	char cookie[256];
	snprintf(cookie, sizeof cookie, "%s=%s; HttpOnly; SameSite=Strict; Path=/", s->cookie_name,
		 s->token);
	add_headers(r, "text/plain; charset=utf-8");
	MHD_add_response_header(r, "Set-Cookie", cookie);
	MHD_add_response_header(r, "Location", "/");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_FOUND, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result serve_api(struct cp_web_server *s, struct MHD_Connection *conn,
				 const char *url)
{
	struct cp_web_req req;
	cp_web_req_init(&req);
	struct args a = {.req = &req};
	MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, each_arg, &a);
	if (!a.bad && cp_web_req_check(&req, a.err, sizeof a.err))
		a.bad = 1;
	enum MHD_Result ret;
	if (a.bad) {
		ret = send_error(conn, 400, a.err);
	} else {
		struct cp_web_resp resp;
		cp_web_resp_init(&resp);
		pthread_mutex_lock(&s->async.lock); /* one SQLite connection, one model */
		if (!strcmp(url, "/api/version"))
			cp_web_live_check(s);
		cp_web_api(&s->model, &s->api, url, &req, &resp);
		pthread_mutex_unlock(&s->async.lock);
		ret = send_buf(conn, resp.status, resp.type, resp.body.buf, resp.body.len, 1);
		cp_web_resp_release(&resp);
	}
	cp_web_req_release(&req);
	return ret;
}

static enum MHD_Result serve_asset(struct MHD_Connection *conn, const char *url)
{
	const char *name = !strcmp(url, "/") ? "index.html" : url + 1;
	const struct cp_web_asset *a = strchr(name, '/') ? NULL : cp_web_asset_find(name);
	if (!a)
		return send_error(conn, 404, "not found");
	return send_buf(conn, 200, cp_web_asset_type(a->name), a->data, a->len, 0);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct cp_web_server *s = cls;
	static int answered;
	if (*con_cls) { /* a body after our answer: dropped */
		*upload_data_size = 0;
		return MHD_YES;
	}
	*con_cls = &answered; /* everything is decided on the headers: no body is accepted */
	const char *length = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return send_error(conn, 405, "only GET");
	if ((length && strcmp(length, "0")) ||
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding"))
		return send_error(conn, 413, "request bodies are not accepted");
	if (!url || strlen(url) > CP_WEB_MAX_URL)
		return send_error(conn, 414, "URL too long");
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	if (!cp_web_host_ok(host, s->bind, s->port))
		return send_error(conn, 403, "wrong Host header (DNS rebinding?)");
	char buf[128];
	const char *token = request_token(s, conn, buf, sizeof buf);
	if (!token || !cp_web_token_eq(token, s->token))
		return send_error(conn, 403,
				  "no or wrong token: open the URL printed by `callpath view`");
	if (!strcmp(url, "/") && MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token"))
		return login(s, conn);
	if (!strncmp(url, "/api/", 5))
		return serve_api(s, conn, url);
	return serve_asset(conn, url);
}

/* Small answers go out at once (no Nagle delay waiting for the client's delayed ACK). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	int one = 1;
	if (ci)
		setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int cp_web_http_start(struct cp_web_server *s, int listen_fd)
{
	s->daemon = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
		MHD_USE_ERROR_LOG,
	    0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, listen_fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_CONNECTION,
	    on_connection, NULL, MHD_OPTION_END);
	if (!s->daemon)
		return cp_error(CP_EIO, "view: cannot start the HTTP server");
	return 0;
}

void cp_web_http_stop(struct cp_web_server *s)
{
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	s->daemon = NULL;
}
