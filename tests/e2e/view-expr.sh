#!/bin/bash
# The front end's formula evaluator (src/view/www/expr.js, used by the self-contained
# --html file, where no server evaluates derived metrics) gives, on every row, the values
# `report --metric NAME=FORMULA` gives; bad formulas are refused by both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/report-helpers/record.sh"
require_tool node

report_record "$WORK/m" "$CP_WORKLOADS/chain.O2" 1000
formulas=("a=cputime/2" "b=cputime-cputime/3*2" "c=max(cputime,1e8)/cputime" "d=sqrt(cputime)"
	"e=(cputime+1)*-2" "f=cputime/(cputime-cputime)" "g=min(abs(cputime-5e8),2.5e8)")
args=()
for f in "${formulas[@]}"; do args+=(--metric "$f"); done
report_json "$WORK/r.json" "$WORK/m" "${args[@]}"
node - "$CP_SOURCE_DIR/src/view/www/expr.js" "$WORK/r.json" <<'JS' || fail "expr.js differs from report"
const fs = require("fs");
global.window = {};
eval(fs.readFileSync(process.argv[2], "utf8"));
const CP = window.CP;
const d = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const measured = d.metrics.filter((m) => m.kind === "measured").map((m) => m.name);
let n = 0;
d.metrics.forEach((m, i) => {
  if (m.kind !== "derived") return;
  const fn = CP.parseFormula(m.formula, measured);
  d.nodes.forEach((row) => {
    for (const k of ["inclusive", "exclusive"]) {
      const got = fn(row[k].slice(0, measured.length)), want = row[k][i];
      const ok = got === null || want === null ? got === want
        : Math.abs(got - want) <= 1e-9 * Math.max(1, Math.abs(want));
      if (!ok) throw new Error(m.name + "=" + m.formula + " on " + row.name + " " + k + ": " + got + " vs " + want);
      n++;
    }
  });
});
for (const bad of ["cputime +", "nosuch*2", "max(cputime)", "(cputime", "cputime 2"]) {
  let threw = false;
  try { CP.parseFormula(bad, measured); } catch (e) { threw = /formula '.*': column \d+/.test(e.message); }
  if (!threw) throw new Error("accepted or unclear error: " + bad);
}
console.log("expr.js: " + n + " values equal to report's");
JS
for bad in "x=cputime +" "x=nosuch*2" "x=max(cputime)"; do
	"$CALLPATH" report "$WORK/m" --metric "$bad" >/dev/null 2>&1 && fail "report accepted $bad"
done
note "ok"
