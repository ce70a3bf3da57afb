// Threads and ranks: the selected scope's value of the chosen metric in every thread, as a
// sorted bar chart and a histogram, with min / mean / max and which thread holds them.
// A click on a bar shows the whole view for that thread.
"use strict";
var CP = window.CP || (window.CP = {});

CP.ThreadsPane = function (app, host) {
  this.app = app;
  this.host = host;
  host.appendChild(CP.el("div", { cls: "src-missing", text: "Select a scope to see its value per thread and rank." }));
};

CP.ThreadsPane.prototype.show = async function (n) {
  var app = this.app, host = this.host;
  var r, sel = app.api.sel || {};
  var one = function (v) { return v !== undefined && v !== null && v !== ""; };
  if (/^[bf]/.test(n.id) && (one(sel.thread) || one(sel.rank))) { // such ids name rows of this selection's view
    host.textContent = "";
    host.appendChild(CP.el("div", { cls: "src-missing", text: "Per-thread values of bottom-up and flat rows: choose all threads." }));
    return;
  }
  try {
    r = await app.api.threadValues(n.id, app.metric);
  } catch (e) {
    host.textContent = "";
    host.appendChild(CP.el("div", { cls: "src-missing", text: "Per-thread values unavailable for this row: " + e.message }));
    return;
  }
  var m = app.metrics[app.metric];
  var byId = new Map((r.profiles || app.profiles).map(function (p) { return [p.id, p]; }));
  var label = function (id) { var p = byId.get(id); return p ? CP.profileLabel(p) : "profile " + id; };
  host.textContent = "";
  var box = CP.el("div", { cls: "thr", "data-node": n.id });
  box.appendChild(CP.el("div", { cls: "src-head" }, [CP.el("b", { text: n.name }),
    CP.el("span", { cls: "muted", text: "  " + m.name + " inclusive per thread" })]));
  if (r.note) box.appendChild(CP.el("p", { cls: "muted", text: r.note }));
  var s = r.stats.incl;
  box.appendChild(CP.el("table", { cls: "stats" }, [
    this.statRow("threads with a value", String(s.count), ""),
    this.statRow("max", CP.formatValue(s.max, m.unit), s.argmax !== null && s.argmax !== undefined ? label(s.argmax) : ""),
    this.statRow("mean", CP.formatValue(s.mean, m.unit), ""),
    this.statRow("min", CP.formatValue(s.min, m.unit), this.argmin(r.values) !== null ? label(this.argmin(r.values)) : ""),
    this.statRow("stddev", CP.formatValue(s.stddev, m.unit), ""),
    this.statRow("max / mean", s.mean ? (s.max / s.mean).toFixed(2) : "", "imbalance")]));
  box.appendChild(CP.el("h4", { text: "Histogram" }));
  box.appendChild(this.histogram(r.values, s));
  box.appendChild(CP.el("h4", { text: "Sorted (click: show the view for that thread)" }));
  var bars = CP.el("div", { cls: "bars" });
  var vals = r.values.slice().sort(function (a, b) { return CP.compareValues(a.incl, b.incl); });
  vals.slice(0, 2000).forEach(function (v) {
    var w = s.max ? (100 * v.incl) / s.max : 0;
    var row = CP.el("div", { cls: "barrow", "data-profile": v.profile, "data-value": v.incl }, [
      CP.el("span", { cls: "lbl", text: label(v.profile), title: label(v.profile) }),
      CP.el("span", { cls: "b", style: "width:" + (w * 0.6).toFixed(2) + "%" }),
      CP.el("span", { cls: "v", text: CP.formatValue(v.incl, m.unit) })]);
    if (!app.api.bundle) row.addEventListener("click", function () { app.changeSelection("t" + v.profile).then(() => app.fillThreadSelect()); });
    bars.appendChild(row);
  });
  box.appendChild(bars);
  host.appendChild(box);
};

CP.ThreadsPane.prototype.argmin = function (values) {
  var best = null;
  values.forEach(function (v) { if (v.incl && (best === null || v.incl < best.incl)) best = v; });
  return best ? best.profile : null;
};

CP.ThreadsPane.prototype.statRow = function (k, v, who) {
  return CP.el("tr", {}, [CP.el("td", { text: k }), CP.el("td", { text: v }), CP.el("td", { cls: "muted", text: who })]);
};

CP.ThreadsPane.prototype.histogram = function (values, s) {
  var bins = 20, counts = new Array(bins).fill(0);
  var xs = values.map(function (v) { return v.incl || 0; });
  var lo = Math.min.apply(null, xs.concat([0])), hi = s.max || 0;
  xs.forEach(function (x) {
    var b = hi > lo ? Math.min(bins - 1, Math.floor(((x - lo) / (hi - lo)) * bins)) : 0;
    counts[b]++;
  });
  var top = Math.max.apply(null, counts) || 1;
  var h = CP.el("div", { cls: "hist", title: "threads by value, " + bins + " bins from " + lo + " to " + hi });
  counts.forEach(function (c) { h.appendChild(CP.el("div", { style: "height:" + (100 * c) / top + "%", title: c + " threads" })); });
  return h;
};
