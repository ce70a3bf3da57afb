// Flame graph (icicle: the root on top) of the top-down view for any metric: click a frame
// to zoom into it, hover for its values; and the sandwich view of a procedure (its callers
// drawn upwards above it, its callees below), both drawn by CP.icicle.
"use strict";
var CP = window.CP || (window.CP = {});

CP.FRAME_H = 18;

CP.colorOf = function (t) {
  if (t.kind === "loop") return "hsl(265,60%,78%)";
  if (t.kind === "line") return "hsl(200,30%,80%)";
  var s = t.module || t.name || "", h = 0;
  for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  var hue = 10 + (Math.abs(h) % 45);
  return "hsl(" + hue + "," + (t.kind === "inlined" ? 55 : 80) + "%," + (62 + (Math.abs(h >> 8) % 12)) + "%)";
};

// Draws tree t (nodes {id, name, kind, module, v, self, children}) into host as an SVG;
// `up` draws the root at the bottom (callers above a procedure).
CP.icicle = function (host, t, opts) {
  var width = Math.max(300, host.clientWidth - 4 || 800);
  var scale = t.v > 0 ? width / t.v : 0;
  var frames = [];
  var maxDepth = 0;
  (function walk(n, x, depth) {
    var w = n.v * scale;
    if (w < 0.5 || depth > 400) return;
    frames.push({ n: n, x: x, w: w, d: depth });
    maxDepth = Math.max(maxDepth, depth);
    var cx = x;
    n.children.slice().sort(function (a, b) { return b.v - a.v; }).forEach(function (c) {
      walk(c, cx, depth + 1);
      cx += c.v * scale;
    });
  })(t, 0, 0);
  var height = (maxDepth + 1) * CP.FRAME_H;
  var svg = CP.svgEl("svg", { width: width, height: height, role: "img" });
  frames.forEach(function (f) {
    var y = opts.up ? height - (f.d + 1) * CP.FRAME_H : f.d * CP.FRAME_H;
    var g = CP.svgEl("g", { class: "fl", "data-id": f.n.id, "data-name": f.n.name, "data-v": f.n.v,
      "data-kind": f.n.kind, "data-depth": f.d });
    g.appendChild(CP.svgEl("rect", { x: f.x, y: y, width: Math.max(0.5, f.w), height: CP.FRAME_H - 1,
      fill: CP.colorOf(f.n), rx: 2 }));
    if (f.w > 30) {
      var tx = CP.svgEl("text", { x: f.x + 3, y: y + 13 });
      var chars = Math.floor((f.w - 6) / 6.5);
      tx.textContent = f.n.name.length > chars ? f.n.name.slice(0, Math.max(0, chars - 1)) + "…" : f.n.name;
      g.appendChild(tx);
    }
    g.addEventListener("mousemove", function (e) { CP.tip(e, opts.describe(f.n)); });
    g.addEventListener("mouseleave", function () { CP.tip(null); });
    g.addEventListener("click", function () { CP.tip(null); opts.onClick(f.n); });
    svg.appendChild(g);
  });
  host.textContent = "";
  host.appendChild(svg);
  return frames.length;
};

CP.tip = function (e, text) {
  var tip = document.getElementById("tooltip");
  if (!e) { tip.hidden = true; return; }
  tip.textContent = text;
  tip.hidden = false;
  tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 300) + "px";
  tip.style.top = e.clientY + 14 + "px";
};

CP.App.prototype.describeFrame = function (n, total) {
  var m = this.metrics[this.metric];
  return n.name + (n.module ? "  (" + CP.basename(n.module) + ")" : "") + "\n" +
    m.name + " inclusive " + CP.formatValue(n.v, m.unit) + " (" + CP.formatPct(CP.pct(n.v, total)) + ")" +
    ", exclusive " + CP.formatValue(n.self, m.unit) + " (" + CP.formatPct(CP.pct(n.self, total)) + ")";
};

CP.Flame = function (app, host) {
  this.app = app;
  this.host = host;
  this.bar = CP.el("div", { cls: "flame-bar" });
  this.svgHost = CP.el("div", { id: "flame-svg" });
  host.appendChild(this.bar);
  host.appendChild(this.svgHost);
  this.stack = [];
  this.rootId = null;
};

CP.Flame.prototype.show = async function (rootId) {
  var app = this.app;
  if (rootId !== undefined && rootId !== null) this.rootId = rootId;
  var id = this.rootId || "0";
  var r;
  try {
    r = await app.api.flame("td", id, app.metric);
  } catch (e) {
    this.svgHost.textContent = "Flame graph unavailable: " + e.message;
    return;
  }
  this.data = r;
  this.draw();
};

CP.Flame.prototype.draw = function () {
  var app = this.app, self = this, r = this.data;
  var m = app.metrics[app.metric];
  this.bar.textContent = "";
  this.bar.appendChild(CP.el("span", { text: "Flame graph of the top-down view, " + m.name +
    (r.truncated ? " (truncated)" : "") + ". Click: zoom; hover: values." }));
  var back = CP.el("button", { text: "Back", id: "flame-back", disabled: !this.stack.length });
  back.addEventListener("click", function () { self.rootId = self.stack.pop() || null; self.show(); app.saveHash(); });
  var reset = CP.el("button", { text: "Whole tree", disabled: !this.rootId || this.rootId === "0" });
  reset.addEventListener("click", function () { self.stack = []; self.rootId = null; self.show(); app.saveHash(); });
  this.bar.appendChild(back);
  this.bar.appendChild(reset);
  var total = m.total || r.total;
  this.frames = CP.icicle(this.svgHost, r.root, {
    describe: function (n) { return app.describeFrame(n, total); },
    onClick: function (n) {
      if (n.id === r.root.id) return;
      self.stack.push(self.rootId);
      self.rootId = n.id;
      self.show();
      app.saveHash();
      app.showScopeInSide("td", n.id);
    }
  });
};

// The procedure id of a name (the bottom-up view's top-level row of that exact name), for
// trees whose nodes do not carry it.
CP.App.prototype.procIdByName = async function (name) {
  var re = "^" + name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";
  var r = await this.api.search("bu", re).catch(() => null);
  var m = r && r.matches.find((x) => x.name === name);
  if (!m) return null;
  var node = await this.api.node("bu", m.id).catch(() => null);
  return node && node.node.proc_id !== undefined ? node.node.proc_id : null;
};

// Selects a scope given by id in the side panes (source, threads) without the table.
CP.App.prototype.showScopeInSide = async function (view, id) {
  var r = await this.api.node(view, id).catch(() => null);
  if (r) await this.updateSide(r.node);
};

CP.Sandwich = function (app, host) {
  this.app = app;
  this.host = host;
  host.appendChild(CP.el("div", { cls: "src-missing", text: "Select a procedure to see its callers and callees." }));
};

CP.Sandwich.prototype.show = async function (procId, name) {
  var app = this.app, host = this.host;
  if (procId === null || procId === undefined) {
    host.textContent = "";
    host.appendChild(CP.el("div", { cls: "src-missing", text: "No procedure for " + (name || "this row") + "." }));
    return;
  }
  var r;
  try {
    r = await app.api.sandwich(procId, app.metric);
  } catch (e) {
    host.textContent = "Sandwich unavailable: " + e.message;
    return;
  }
  var m = app.metrics[app.metric];
  host.textContent = "";
  var up = CP.el("div", { cls: "sw-callers" }), down = CP.el("div", { cls: "sw-callees" });
  host.appendChild(CP.el("div", { cls: "src-head" }, [CP.el("b", { cls: "sw-name", text: r.procedure.name }),
    CP.el("span", { cls: "muted", text: "  " + m.name + " inclusive " + CP.formatValue(r.incl[app.metric], m.unit) +
      ", exclusive " + CP.formatValue(r.excl[app.metric], m.unit) })]));
  host.appendChild(CP.el("h4", { text: "callers ↑" }));
  host.appendChild(up);
  host.appendChild(CP.el("h4", { text: "callees ↓" }));
  host.appendChild(down);
  var total = m.total;
  var describe = function (n) { return app.describeFrame(n, total); };
  var self = this;
  var click = async function (n) {
    if (n.kind !== "procedure" && n.kind !== "caller") return;
    var id = n.proc_id !== undefined && n.proc_id !== null ? n.proc_id : await app.procIdByName(n.name);
    if (id !== null) self.show(id, n.name);
  };
  CP.icicle(up, r.callers, { up: true, describe: describe, onClick: click });
  CP.icicle(down, r.callees, { describe: describe, onClick: click });
};
