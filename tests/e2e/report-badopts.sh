#!/bin/bash
# A bad option value makes report and diff exit 2 naming that very option (report used to
# name its neighbour in the option table: --format xml was "invalid value for --rank").
source "$(dirname "$0")/lib.sh"
require_built "$CALLPATH"
for cmd_opt in "report --format" "report --stat" "report --stat-over" "report --flatten" \
	"report --hot-path=" "report --live=" "report --rank" "report --depth" "report --thread" \
	"report --view" "report --threshold" "diff --format" "diff --normalize" "diff --depth" \
	"diff --flatten" "diff --view"; do
	read -r cmd opt <<<"$cmd_opt"
	rc=0
	case $opt in
	*=) "$CALLPATH" $cmd "${opt}bad" a b >/dev/null 2>"$WORK/err" || rc=$? ;;
	*) "$CALLPATH" $cmd "$opt" bad a b >/dev/null 2>"$WORK/err" || rc=$? ;;
	esac
	[ $rc = 2 ] || fail "$cmd $opt bad exited $rc, not 2: $(cat "$WORK/err")"
	grep -qF "invalid value 'bad' for ${opt%=} " "$WORK/err" || fail "$cmd $opt bad: $(cat "$WORK/err")"
done
note "ok"
