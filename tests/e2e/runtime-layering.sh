#!/bin/bash
# The runtime's source rules, checked rather than remembered (docs/internals/runtime.md):
#  1. every file of the signal-time set includes the one banned list, base/sigsafe/banned.h,
#     after its other includes; the set is every .c file of src/runtime except interpose/
#     (the wrappers call the real libc functions by design) and the init-time files listed
#     here, which never run in a signal handler or a probe. A new file is signal-time
#     unless it is added to the list.
#  2. no file keeps a poison list of its own (one list).
#  3. no file includes another module's private header (*-internal.h).
#  4. banned.h makes each forbidden call a compile error (a few representatives).
#  5. the modules depend one way: a module includes only the public headers of the
#     modules below it (the order in docs/internals/runtime.md), except core's two
#     shared-state headers, core/runtime.h (cp_rt, the thread state) and core/fds.h (the
#     owned-descriptor bitmap), which every module may include.
source "$(dirname "$0")/lib.sh"

RT=$CP_SOURCE_DIR/src/runtime
cd "$RT" || fail "no $RT"

# Init-time files: configuration, process start and end, module registration, patching,
# the process file, the wrappers of libgcc's unwinder and of libgomp (dlsym), other
# processes' modules for the kernel-copy driver (unwind/modules-image.c, run by the CLI);
# core/thread-end.c runs at thread end and exit (its crash-path part uses stores and
# system calls only); core/mpi-rank.c right after the program's MPI_Init; core/attach.c
# when attach --inject starts the runtime (a call made by callpath through ptrace).
INIT_TIME="
core/attach.c
core/config.c
core/control.c
core/init.c
core/mpi-rank.c
core/startup.c
core/sync-init.c
core/thread-end.c
omp/context.c
omp/gomp.c
omp/ompt.c
omp/task.c
probe/install.c
probe/loop-install.c
probe/unwind-hook.c
sample/cputime-init.c
sample/perf-event-init.c
unwind/modules.c
unwind/modules-image.c
unwind/unwind-init.c
writer/procfile.c
"

errors=0
bad() {
	echo "FAIL [$TEST_NAME]: $*" >&2
	errors=$((errors + 1))
}

listed() { # file list
	grep -qx "$1" <<<"$2"
}

for f in $INIT_TIME; do
	[ -e "$f" ] || bad "$f is listed but does not exist (update the list)"
done

n_signal=0
while read -r f; do
	f=${f#./}
	case $f in interpose/*) continue ;; esac
	if listed "$f" "$INIT_TIME"; then
		grep -q '#include "base/sigsafe/banned.h"' "$f" &&
			bad "$f includes banned.h but is listed as init-time (update the list)"
		continue
	fi
	n_signal=$((n_signal + 1))
	last=$(grep '^#include' "$f" | tail -n 1)
	[ "$last" = '#include "base/sigsafe/banned.h"' ] ||
		bad "$f (signal-time) does not include base/sigsafe/banned.h after its other includes"
done < <(find . -name '*.c' | sort)
[ "$n_signal" -ge 15 ] || bad "only $n_signal signal-time files found: is the list right?"

grep -rln '#pragma GCC poison' . | while read -r f; do
	echo "FAIL [$TEST_NAME]: $f has a poison list of its own: include base/sigsafe/banned.h" >&2
	exit 1
done || errors=$((errors + 1))

# Module order, lowest first; a module may include the public headers of those before it.
ORDER="cct unwind sample probe omp core writer interpose"
STATE_HEADERS="core/runtime.h core/fds.h"
rank() {
	local i=0 m
	for m in $ORDER; do
		[ "$m" = "$1" ] && echo $i && return
		i=$((i + 1))
	done
	echo 99
}

while IFS=: read -r f inc; do
	f=${f#./}
	mod=${f%%/*}
	inc=${inc#*\"runtime/}
	inc=${inc%\"*}
	imod=${inc%%/*}
	[ "$imod" = "$mod" ] && continue
	case $inc in
	*-internal.h) bad "$f includes $inc, a private header of $imod/" ;;
	esac
	[[ " $STATE_HEADERS " == *" $inc "* ]] && continue
	[ "$(rank "$imod")" -lt "$(rank "$mod")" ] ||
		bad "$f ($mod/) includes runtime/$inc: $imod/ is not below $mod/"
done < <(grep -rHo '#include "runtime/[a-z]*/[a-z-]*\.h"' --include='*.[ch]' .)

# The list bans what the design forbids in a handler: a call after it does not compile.
CC=${CC:-cc}
if command -v "$CC" >/dev/null; then
	for call in 'malloc(8)' 'free(0)' 'snprintf(0, 0, "x")' 'fopen("x", "r")' \
		'dlsym(0, "x")' 'pthread_mutex_lock(0)' 'pthread_rwlock_rdlock(0)' 'getenv("x")' \
		'aligned_alloc(8, 8)' 'exit(1)'; do
		printf '#include <dlfcn.h>\n#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include "base/sigsafe/banned.h"\nvoid f(void) { (void)%s; }\n' \
			"$call" >"$WORK/banned.c"
		"$CC" -D_GNU_SOURCE -I"$CP_SOURCE_DIR/src" -fsyntax-only "$WORK/banned.c" 2>/dev/null &&
			bad "banned.h lets $call through"
	done
	printf '#include <stdlib.h>\n#include "base/sigsafe/banned.h"\nvoid f(void) { }\n' >"$WORK/ok.c"
	"$CC" -I"$CP_SOURCE_DIR/src" -fsyntax-only "$WORK/ok.c" || bad "banned.h does not compile on its own"
fi

[ "$errors" -eq 0 ] || fail "$errors rule(s) broken"
note "ok: $n_signal signal-time files include banned.h; no private header or upward include"
