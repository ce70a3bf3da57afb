#!/usr/bin/env bash
# Runs the README's two commands (scripts/demo.sh, then scripts/test.sh) as a new user
# would: in a fresh Debian 12 (`debootstrap --variant=minbase bookworm`) chroot with only
# git and ca-certificates added, on a clone of this repository's HEAD. Prints PASS or FAIL
# for each command and exits 0 only when both pass. Needs root (debootstrap, chroot, mount).
#
#   scripts/fresh-check.sh [REPO]      REPO defaults to this checkout; commit first: only
#                                      committed work is cloned
# Environment:
#   FRESH_DIR=DIR     build the chroot in DIR (default: a new /var/tmp/callpath-fresh.XXXXXX)
#   FRESH_KEEP=1      keep the chroot afterwards (default: deleted, it holds ~3 GB)
#   FRESH_CACHE=DIR   .deb cache shared between runs (default /var/cache/callpath-fresh;
#                     FRESH_CACHE= downloads everything every time)
#   FRESH_MIRROR=URL  Debian mirror (default: the one the host's apt sources use)
# The log of everything run inside is DIR.log beside the chroot.
set -euo pipefail

repo=$(cd "${1:-$(dirname "$0")/..}" && git rev-parse --show-toplevel)
cache=${FRESH_CACHE-/var/cache/callpath-fresh}
say() { echo "fresh-check: $*"; }
die() {
	echo "fresh-check: $*" >&2
	exit 2
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mount)"
if ! command -v debootstrap >/dev/null; then
	say "apt-get install debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
	say "warning: $repo has uncommitted changes; only HEAD is checked"

# The host's Debian mirror for SUITE (one-line .list and deb822 .sources files).
host_mirror() {
	local suite=$1 f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v s="$suite" '$1 == "deb" { for (i = 2; i < NF; i++) if ($i !~ /^\[/ && $(i + 1) == s) { print $i; exit } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$suite" 'BEGIN { RS = ""; FS = "\n" }
			{ uri = ""; ok = 0
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); uri = u[2] }
				if ($i ~ /^Suites:/) { n = split($i, w, /[ \t]+/); for (j = 2; j <= n; j++) if (w[j] == s) ok = 1 }
			  }
			  if (ok && uri != "") { print uri; exit } }' "$f"
	done
}
mirror=${FRESH_MIRROR:-$(host_mirror bookworm | head -n1)}
mirror=${mirror:-http://deb.debian.org/debian}
security=$(host_mirror bookworm-security | head -n1)

if [ -n "${FRESH_DIR:-}" ]; then
	root=$FRESH_DIR
	mkdir -p "$root"
else
	root=$(mktemp -d /var/tmp/callpath-fresh.XXXXXX)
fi
root=$(cd "$root" && pwd)
# The chroot's / must be searchable by everyone, as a real / is (mktemp makes it 0700 and
# then nothing but root could load a library in there).
chmod 755 "$root"
log=$root.log
: >"$log"

mounted=()
cleanup() {
	local m i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		umount -R "$m" 2>/dev/null || umount -R -l "$m" 2>/dev/null || true
	done
	# Never delete through a mount that is still there (/dev, /proc).
	if [ "${FRESH_KEEP:-0}" != 1 ] && ! grep -q " $root/" /proc/mounts; then
		rm -rf "$root"
	elif [ -d "$root" ]; then
		say "chroot kept in $root"
	fi
}
trap cleanup EXIT
mount_into() { # mount_into TARGET MOUNT-ARGS...
	local target=$root$1
	shift
	mkdir -p "$target"
	mount "$@" "$target"
	mounted+=("$target")
}

start=$SECONDS
say "debootstrap --variant=minbase bookworm $root ($mirror)"
deboot_args=(--variant=minbase)
if [ -n "$cache" ]; then
	mkdir -p "$cache"
	deboot_args+=(--cache-dir="$cache")
fi
debootstrap "${deboot_args[@]}" bookworm "$root" "$mirror" >>"$log" 2>&1 ||
	die "debootstrap failed (see $log)"
{
	echo "deb $mirror bookworm main"
	echo "deb $mirror bookworm-updates main"
	[ -z "$security" ] || echo "deb $security bookworm-security main"
} >"$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# perf events, /proc/self/maps and ptrace need the real /proc, /sys and /dev.
mount_into /proc -t proc proc
mount_into /sys --rbind /sys
mount --make-rslave "$root/sys"
mount_into /dev --rbind /dev
mount --make-rslave "$root/dev"
[ -z "$cache" ] || mount_into /var/cache/apt/archives --bind "$cache"

# A host behind a TLS-inspecting proxy trusts the proxy's CA through NODE_EXTRA_CA_CERTS;
# without it npm (install-node-tools.sh) fails in the chroot with SELF_SIGNED_CERT_IN_CHAIN
# and the browser test skips. The same file is made known inside; nothing else is copied.
extra_ca=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
	cp "$NODE_EXTRA_CA_CERTS" "$root/etc/host-extra-ca.crt"
	extra_ca=(NODE_EXTRA_CA_CERTS=/etc/host-extra-ca.crt)
fi

inside() { # runs a shell command in the chroot as root, in a clean environment
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 "${extra_ca[@]}" \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "$1"
}

say "apt-get install git ca-certificates"
inside 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git ca-certificates' \
	>>"$log" 2>&1 || die "cannot install git in the chroot (see $log)"

# The clone: HEAD of REPO, through a bundle so that the chroot's own git clones it.
rev=$(git -C "$repo" rev-parse HEAD)
git -C "$repo" bundle create "$root/tmp/callpath.bundle" HEAD >>"$log" 2>&1
inside 'git clone -q /tmp/callpath.bundle /root/callpath' >>"$log" 2>&1 ||
	die "git clone failed in the chroot (see $log)"
say "cloned $(git -C "$repo" log -1 --format='%h %s' "$rev")"

# run_step NAME COMMAND: runs the README command in the clone, logs it, prints the result.
results=()
status=0
run_step() {
	local t=$SECONDS rc=0
	echo "===== $2" >>"$log"
	inside "cd /root/callpath && $2" >>"$log" 2>&1 || rc=$?
	local took="$(((SECONDS - t) / 60))m$(((SECONDS - t) % 60))s"
	if [ $rc = 0 ]; then
		results+=("$1 PASS ($took)")
	else
		results+=("$1 FAIL (exit $rc, $took)")
		status=1
	fi
	say "${results[-1]}"
}
say "running scripts/demo.sh (log: $log)"
run_step demo.sh scripts/demo.sh
say "running scripts/test.sh"
run_step test.sh scripts/test.sh
grep '^test.sh: ' "$log" | tail -n1 | sed 's/^/fresh-check: /' || true

line=$(printf '%s; ' "${results[@]}")
say "${line%; } -- total $(((SECONDS - start) / 60)) min, log $log"
exit $status
