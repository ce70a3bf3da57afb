// Derived-metric formulas in the syntax of `report --metric NAME=FORMULA` (src/db/expr.h):
// numbers, metric names, + - * /, unary minus, parentheses, min max abs sqrt. A name is
// the longest known metric name its run of name characters starts with, cut only at '-'.
// Division by zero and sqrt of a negative number give NaN ("no value").
"use strict";
var CP = window.CP || (window.CP = {});

CP.parseFormula = function (text, names) {
  var pos = 0;
  function fail(msg) {
    throw new Error("formula '" + text + "': column " + (pos + 1) + ": " + msg);
  }
  function ws() { while (pos < text.length && /\s/.test(text[pos])) pos++; }
  function nameAt() {
    var m = /^[A-Za-z_][A-Za-z0-9_.:\-]*/.exec(text.slice(pos));
    if (!m) return null;
    var run = m[0];
    if (text[pos + run.length] === "(") return { fn: run };
    for (var cut = run.length; cut > 0; cut = run.lastIndexOf("-", cut - 1)) {
      var cand = run.slice(0, cut);
      if (names.indexOf(cand) >= 0) return { metric: cand };
      if (cut <= 0) break;
    }
    fail("unknown metric '" + run + "'");
  }
  function primary() {
    ws();
    var c = text[pos];
    if (c === "(") {
      pos++;
      var e = sum();
      ws();
      if (text[pos] !== ")") fail("expected ')'");
      pos++;
      return e;
    }
    if (c === "-") { pos++; var u = primary(); return function (v) { return -u(v); }; }
    var num = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(pos));
    if (num) { pos += num[0].length; var k = parseFloat(num[0]); return function () { return k; }; }
    var n = nameAt();
    if (!n) fail("expected a number, a metric or '('");
    if (n.metric) {
      pos += n.metric.length;
      var idx = names.indexOf(n.metric);
      return function (v) { return v[idx]; };
    }
    return call(n.fn);
  }
  function call(fn) {
    var arity = { min: 2, max: 2, abs: 1, sqrt: 1 }[fn];
    if (!arity) fail("unknown function '" + fn + "'");
    pos += fn.length + 1;
    var args = [sum()];
    while (args.length < arity) {
      ws();
      if (text[pos] !== ",") fail("expected ','");
      pos++;
      args.push(sum());
    }
    ws();
    if (text[pos] !== ")") fail("expected ')'");
    pos++;
    var a = args[0], b = args[1];
    if (fn === "abs") return function (v) { return Math.abs(a(v)); };
    if (fn === "sqrt") return function (v) { var x = a(v); return x < 0 ? NaN : Math.sqrt(x); };
    if (fn === "min") return function (v) { var x = a(v), y = b(v); return x !== x || y !== y ? NaN : Math.min(x, y); };
    return function (v) { var x = a(v), y = b(v); return x !== x || y !== y ? NaN : Math.max(x, y); };
  }
  var ops = {
    "*": function (l, r) { return function (v) { return l(v) * r(v); }; },
    "/": function (l, r) { return function (v) { var d = r(v); return d === 0 ? NaN : l(v) / d; }; },
    "+": function (l, r) { return function (v) { return l(v) + r(v); }; },
    "-": function (l, r) { return function (v) { return l(v) - r(v); }; }
  };
  // Left-associative chain of the operators in `set` over operands read by `operand`.
  function chain(operand, set) {
    var l = operand();
    for (;;) {
      ws();
      var op = text[pos];
      if (set.indexOf(op) < 0) return l;
      pos++;
      l = ops[op](l, operand());
    }
  }
  function product() { return chain(primary, "*/"); }
  function sum() { return chain(product, "+-"); }
  var f = sum();
  ws();
  if (pos < text.length) fail("unexpected '" + text[pos] + "'");
  // Values arrive as numbers or null (no value): null makes the result no value.
  return function (vals) {
    var v = vals.map(function (x) { return x === null || x === undefined ? NaN : x; });
    var r = f(v);
    return Number.isFinite(r) ? r : null;
  };
};
