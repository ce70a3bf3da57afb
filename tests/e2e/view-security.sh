#!/bin/bash
# `callpath view`'s security model (docs/cmd-view.md, "Security"): the token (missing, wrong,
# as parameter, header and cookie, the login redirect), the Host check against DNS
# rebinding, GET only, path traversal and files by id only, bad and hostile parameters (4xx,
# never a crash: the server still answers afterwards), and the security headers on every
# answer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"
. "$(dirname "$0")/view-helpers/serve.sh"

report_record "$WORK/m" "$CP_WORKLOADS/chain.O2" 100
view_start "$WORK/m"
case $VIEW_BASE in http://127.0.0.1:[0-9]*) ;; *) fail "not on 127.0.0.1: $VIEW_URL" ;; esac
[[ $VIEW_TOKEN =~ ^[0-9a-f]{32}$ ]] || fail "the token is not 128 bits of hex: $VIEW_TOKEN"
ss -ltn 2>/dev/null | grep -q "127.0.0.1:$VIEW_PORT" ||
	{ command -v ss >/dev/null && fail "not listening on 127.0.0.1:$VIEW_PORT only"; }

headers_ok() {
	grep -qi "^content-security-policy: default-src 'none'" "$WORK/headers" &&
		grep -qi '^x-content-type-options: nosniff' "$WORK/headers" &&
		grep -qi '^referrer-policy: no-referrer' "$WORK/headers" ||
		fail "security headers missing on $1: $(cat "$WORK/headers")"
}

# the token
for p in / /index.html /api/info /api/children; do
	[ "$(vraw "$p")" = 403 ] || fail "$p without the token is not refused"
	headers_ok "403 $p"
	[ "$(vraw "$p?token=0123456789abcdef0123456789abcdef")" = 403 ] ||
		fail "$p with a wrong token is not refused"
	[ "$(vraw "$p" -H "X-Callpath-Token: ${VIEW_TOKEN%?}x")" = 403 ] ||
		fail "$p with a wrong token header is not refused"
	[ "$(vraw "$p" -H "Cookie: callpath_$VIEW_PORT=${VIEW_TOKEN}0")" = 403 ] ||
		fail "$p with a wrong cookie is not refused"
	[ "$(vraw "$p" -H "Cookie: callpath_1=$VIEW_TOKEN")" = 403 ] ||
		fail "$p with another server's cookie is not refused"
done
[ "$(vraw "/?token=$VIEW_TOKEN")" = 302 ] || fail "the URL printed does not log in"
grep -qi "^set-cookie: callpath_$VIEW_PORT=$VIEW_TOKEN; HttpOnly; SameSite=Strict; Path=/" \
	"$WORK/headers" || fail "no cookie set: $(cat "$WORK/headers")"
grep -qi '^location: /\s*$' "$WORK/headers" || fail "the login does not redirect to /"
[ "$(vraw /api/info -H "Cookie: a=b; callpath_$VIEW_PORT=$VIEW_TOKEN")" = 200 ] ||
	fail "the cookie is not accepted"
headers_ok "200 /api/info"
[ "$(vraw "/api/info?token=$VIEW_TOKEN")" = 200 ] || fail "the token parameter is not accepted"
[ "$(vget /)" = 200 ] && grep -qi '<html' "$WORK/body" || fail "/ does not serve the page"
headers_ok "200 /"

# DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host
for h in "evil.example:$VIEW_PORT" "127.0.0.1" "127.0.0.1:1" "localhost.evil.example:$VIEW_PORT"; do
	[ "$(vget /api/info -H "Host: $h")" = 403 ] || fail "Host: $h is accepted"
done
for h in "localhost:$VIEW_PORT" "127.0.0.1:$VIEW_PORT" "LOCALHOST:$VIEW_PORT"; do
	[ "$(vget /api/info -H "Host: $h")" = 200 ] || fail "Host: $h is refused"
done

# read-only: GET and HEAD only, no bodies
for m in POST PUT DELETE PATCH OPTIONS; do
	s=$(vget /api/info -X "$m")
	[ "$s" = 405 ] || fail "$m answered $s"
done
s=$(vget /api/info -X POST --data-binary 'x=1')
[ "$s" = 413 ] || [ "$s" = 405 ] || fail "a POST with a body answered $s"
[ "$(vget /api/info -I)" = 200 ] || fail "HEAD is refused"

# traversal: no path from a request reaches the file system
for p in /../../../../etc/passwd /%2e%2e/%2e%2e/etc/passwd /..%2f..%2fetc/passwd \
	/index.html/../../../etc/passwd /api/../../etc/passwd "/\\..\\..\\etc\\passwd" \
	/www/index.html /etc/passwd //etc/passwd /api/source/../../../etc/passwd; do
	s=$(vget "$p")
	case $s in 4??) ;; *) fail "$p answered $s" ;; esac
	! grep -q 'root:' "$WORK/body" || fail "$p served /etc/passwd"
done
for q in file=/etc/passwd file=../../etc/passwd file=-1 file=0x1 "file=1%00" file=; do
	expect_status 400 "/api/source?$q"
done
expect_status 404 "/api/source?file=4294967294"
expect_status 404 "/api/source?file=99999"

# bad parameters: 400 (404 for ids that parse but name nothing)
long=$(printf 'x%.0s' $(seq 2000))
many=$(for i in $(seq 40); do printf '_=%d&' "$i"; done)
for q in "node=abc" "node=1.x" "node=b1" "node=-1" "node=4294967295" "node=1.n.n" "view=zz" \
	"stat=avg" "sort=0:up" "sort=999:incl" "sort=:incl" "threshold=101" "threshold=nan" \
	"threshold=1e999" "threshold=0x10" "limit=-1" "limit=99999999999" "offset=abc" "unknown=1" \
	"derived=noequals" "derived=x%3Dnosuch" "derived=x%3D(cputime" "derived=cputime%3D1" \
	"metric=7" "metric=999" "stat=max&thread=0" "q=$long" "$many" "thread=1e3" "rank=x" \
	"view=bu&node=5"; do
	expect_status 400 "/api/children?$q"
	grep -q '^{"error":"' "$WORK/body" || fail "no error message for $q"
done
expect_status 404 "/api/children?node=99999"
expect_status 404 "/api/children?thread=99999"
expect_status 404 "/api/children?view=bu&node=b99999"
expect_status 404 "/api/nosuch"
for q in "q=(" "q=a%5C1" "q="; do expect_status 400 "/api/search?$q"; done
expect_status 400 "/api/sandwich"
expect_status 404 "/api/sandwich?proc=99999"
expect_status 400 "/api/threads?node=1.n"
s=$(vget "/api/children?node=$(printf '9%.0s' $(seq 6000))")
case $s in 400 | 414 | 431) ;; *) fail "a 6000-byte URL answered $s" ;; esac
s=$(vget /api/info -H "X-Long: $(printf 'y%.0s' $(seq 70000))")
case $s in 4??) ;; 000) ;; *) fail "a 70 kB header answered $s" ;; esac
printf 'GET /api/info HTTP/1.1\r\nHost: \x00\xff\r\n\r\n' >"$WORK/raw"
curl -s --max-time 3 "telnet://127.0.0.1:$VIEW_PORT" <"$WORK/raw" >/dev/null 2>&1 || true

# still alive and answering
kill -0 "$VIEW_PID" 2>/dev/null || fail "the server died"
expect_status 200 "/api/info"
note "token, Host, methods, traversal and bad parameters refused"
