// The source pane: the file of the selected scope at its line, every line with its cost
// (exclusive value of the chosen metric summed over all calling contexts) as a heat
// column; loops and inlined code marked. A missing file is said in the pane.
"use strict";
var CP = window.CP || (window.CP = {});

CP.SourcePane = function (app, host) {
  this.app = app;
  this.host = host;
  this.cache = new Map();
  host.appendChild(CP.el("div", { cls: "src-missing", text: "Select a scope to see its source." }));
};

CP.SourcePane.prototype.message = function (text, path) {
  this.host.textContent = "";
  if (path) this.host.appendChild(CP.el("div", { cls: "src-head", text: path }));
  this.host.appendChild(CP.el("div", { cls: "src-missing", role: "status", text: text }));
};

CP.SourcePane.prototype.fetch = function (fileId) {
  var key = fileId + "/" + this.app.selKey() + "/" + this.app.api.derived.length;
  if (!this.cache.has(key)) this.cache.set(key, this.app.api.source(fileId));
  return this.cache.get(key);
};

CP.SourcePane.prototype.show = async function (n) {
  if (n.file_id === null || n.file_id === undefined) {
    this.message(n.kind === "root" ? "The total has no source." :
      "No source file is known for " + n.name + " (no line information).");
    return;
  }
  var s;
  try {
    s = await this.fetch(n.file_id);
  } catch (e) {
    this.message("Could not load the source: " + e.message, n.file);
    return;
  }
  if (!s.available) {
    this.message("Source not available: " + (s.reason || "unknown reason") + ".", s.file && s.file.path);
    return;
  }
  this.render(s, n);
};

// Lines around the target are built (at most 4000), so a huge file stays cheap.
CP.SourcePane.prototype.render = function (s, n) {
  var app = this.app, m = app.metric, metric = app.metrics[m];
  var lo = n.line || 1, hi = n.line_end > lo ? n.line_end : lo;
  var inLoop = new Map(), inl = new Set(s.inlined || []);
  (s.loops || []).forEach(function (l) {
    for (var i = l.line; i <= l.line_end; i++) inLoop.set(i, (inLoop.get(i) || 0) + 1);
  });
  var costs = s.costs || {}, max = 0;
  Object.keys(costs).forEach(function (k) { max = Math.max(max, costs[k][m] || 0); });
  var first = Math.max(1, lo - 2000), last = Math.min(s.lines.length, first + 4000);
  this.host.textContent = "";
  this.host.appendChild(CP.el("div", { cls: "src-head" }, [
    CP.el("b", { text: s.file.path }),
    CP.el("span", { cls: "muted", text: "  line cost: " + metric.name + " (exclusive, all contexts)" })]));
  var box = CP.el("div", { cls: "src", "data-file": s.file.id });
  for (var i = first; i <= last; i++) {
    var c = costs[i] ? costs[i][m] : null;
    var cost = CP.el("span", { cls: "cost", text: c ? CP.formatValue(c, metric.unit) : "" });
    if (c) cost.style.background = CP.heat(max ? c / max : 0);
    if (c) cost.style.color = "#111";
    var startLoop = (s.loops || []).some(function (l) { return l.line === i; });
    var line = CP.el("div", {
      cls: "src-line" + (inLoop.has(i) ? " in-loop" : "") + (inl.has(i) ? " inl" : "") +
        (i >= lo && i <= hi ? " target" : ""),
      "data-line": i, "data-cost": c || ""
    }, [CP.el("span", { cls: "no", text: i }), cost,
      CP.el("span", { cls: "mark", text: startLoop ? "↻" : inl.has(i) ? "ⁱ" : "",
        title: startLoop ? "loop" : inl.has(i) ? "inlined code" : null }),
      CP.el("span", { cls: "code", text: s.lines[i - 1] })]);
    box.appendChild(line);
  }
  this.host.appendChild(box);
  var target = box.querySelector(".target");
  if (target) this.host.scrollTop = Math.max(0, target.offsetTop - this.host.clientHeight / 3);
};
