// Shared helpers of the viewer: formatting, DOM building, the URL hash state.
// Classic script (no modules) so the single-file --html output can inline it as is.
"use strict";
var CP = window.CP || (window.CP = {});

CP.el = function (tag, attrs, children) {
  var e = document.createElement(tag);
  if (attrs) {
    for (var k in attrs) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "cls") e.className = v;
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
  }
  (children || []).forEach(function (c) {
    if (c !== null && c !== undefined)
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  });
  return e;
};

CP.svgEl = function (tag, attrs) {
  var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  return e;
};

CP.basename = function (p) {
  if (!p) return "";
  var i = p.lastIndexOf("/");
  return i < 0 ? p : p.slice(i + 1);
};

// A value in its metric's unit, as the text report prints it: ns as seconds.
CP.formatValue = function (v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return "";
  if (unit === "ns") return (v / 1e9).toFixed(3) + "s";
  var a = Math.abs(v);
  var units = [[1e12, "T"], [1e9, "G"], [1e6, "M"]];
  for (var i = 0; i < units.length; i++)
    if (a >= units[i][0]) return (v / units[i][0]).toFixed(a >= 100 * units[i][0] ? 1 : 3) + units[i][1];
  if (a !== 0 && a < 1e-3) return v.toExponential(3);
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(3);
};

CP.formatPct = function (p) {
  if (p === null || p === undefined || Number.isNaN(p)) return "";
  return p.toFixed(2) + "%";
};

CP.pct = function (v, total) {
  if (v === null || v === undefined || Number.isNaN(v)) return null;
  if (!total) return 0;
  return (100 * v) / total;
};

// Sorts with rows without a value last, as the report does.
CP.compareValues = function (a, b) {
  var an = a === null || a === undefined || Number.isNaN(a);
  var bn = b === null || b === undefined || Number.isNaN(b);
  if (an || bn) return an === bn ? 0 : an ? 1 : -1;
  return b - a;
};

// The hash holds the view state: #view=top-down&sel=12&zoom=3&... (shareable links).
CP.readHash = function () {
  var out = {};
  var h = location.hash.replace(/^#/, "");
  if (!h) return out;
  h.split("&").forEach(function (kv) {
    var i = kv.indexOf("=");
    if (i > 0) out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
  });
  return out;
};

CP.writeHash = function (state) {
  var parts = [];
  Object.keys(state).forEach(function (k) {
    var v = state[k];
    if (v === null || v === undefined || v === "") return;
    parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(v));
  });
  var h = "#" + parts.join("&");
  if (h !== location.hash) history.replaceState(null, "", h);
};

// Heat colour for a fraction 0..1 (used by the source pane and the flame graph).
CP.heat = function (f) {
  f = Math.max(0, Math.min(1, f || 0));
  var hue = 50 - 50 * f;
  return "hsl(" + hue.toFixed(0) + ",90%," + (70 - 25 * f).toFixed(0) + "%)";
};

CP.kindLabel = {
  root: "total", procedure: "proc", inlined: "inlined", loop: "loop", line: "line",
  partial: "partial", caller: "caller", module: "module", file: "file", callsite: "call site"
};
