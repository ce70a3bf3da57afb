#!/bin/bash
# callpath search on a program nobody here wrote: Debian's stripped xz, whose time is in a
# system library (liblzma). Under the default `--libraries user` a system library enters
# the code model once its own code holds a quarter of the threshold of the samples, so the
# search goes on from xz's call of lzma_code into liblzma's functions and loops and puts
# one of them in its top 3 (without that it stopped at xz's own functions).
. "$(dirname "$0")/lib.sh"
require_tool xz
require_built "$CALLPATH"
head -c 24000000 /dev/urandom | base64 >"$WORK/in.txt"
"$CALLPATH" search -q --for 10 --kill --format json -o "$WORK/m" -- \
	xz -T1 -9 -k -c "$WORK/in.txt" >"$WORK/xz.out" 2>"$WORK/err" ||
	fail "search failed: $(tail -5 "$WORK/err")"
json_assert "$WORK/m/search.json" "(any('liblzma' in (b.get('module') or '')
    for b in d['bottlenecks'][:3]))" \
	"no liblzma focus in the top 3: $(head -c 2000 "$WORK/m/search.json")"
note "top 3: $(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print('; '.join('%s %s %s' % ((b.get('module') or '').rsplit('/', 1)[-1], b.get('function'), b.get('kind'))
                for b in d['bottlenecks'][:3]))" "$WORK/m/search.json")"
