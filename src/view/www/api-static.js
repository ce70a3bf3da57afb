// The API answered from the bundle of a self-contained file (`callpath view --html`):
// every node of each view with its parent, the sources, the call graph and per-thread
// values of metric 0 (docs/cmd-view.md, "The self-contained file").
"use strict";
var CP = window.CP || (window.CP = {});

CP.Api.prototype.indexBundle = function () {
  var views = {};
  var b = this.bundle;
  Object.keys(b.views || {}).forEach(function (v) {
    var byId = new Map(), kids = new Map();
    b.views[v].nodes.forEach(function (n) {
      n.incl0 = n.incl;
      n.excl0 = n.excl;
      byId.set(n.id, n);
      if (n.parent === null || n.parent === undefined) return;
      if (!kids.has(n.parent)) kids.set(n.parent, []);
      kids.get(n.parent).push(n);
    });
    views[v] = { byId: byId, kids: kids, truncated: b.views[v].truncated };
  });
  this.views = views;
};

CP.Api.prototype.applyDerived = function () {
  var ds = this.derived;
  Object.keys(this.views).forEach(function (v) {
    this.views[v].byId.forEach(function (n) {
      n.incl = n.incl0.concat(ds.map(function (d) { return d.fn(n.incl0); }));
      n.excl = n.excl0.concat(ds.map(function (d) { return d.fn(n.excl0); }));
    });
  }, this);
};

CP.Api.prototype.staticView = function (view) {
  var v = this.views[view];
  if (!v) throw new Error("this file holds no " + view + " view");
  return v;
};

CP.Api.prototype.copyNode = function (v, n) {
  var c = Object.assign({}, n);
  c.has_children = v.kids.has(n.id);
  return c;
};

CP.Api.prototype.bundleChildren = function (view, id) {
  var v = this.staticView(view);
  var n = v.byId.get(id || "0");
  if (!n) throw new Error("no node " + id);
  var kids = (v.kids.get(n.id) || []).map(this.copyNode.bind(this, v));
  return { node: this.copyNode(v, n), children: kids, total: kids.length };
};

CP.Api.prototype.bundlePath = function (view, id) {
  var v = this.staticView(view);
  var path = [];
  for (var n = v.byId.get(id); n; n = v.byId.get(n.parent)) path.unshift(this.copyNode(v, n));
  if (!path.length) throw new Error("no node " + id);
  return { node: path[path.length - 1], path: path };
};

CP.Api.prototype.bundleSearch = function (view, q) {
  var v = this.staticView(view);
  var re = new RegExp(q, "i");
  var out = [];
  v.byId.forEach(function (n) {
    if (n.parent === null || n.parent === undefined || !re.test(n.name)) return;
    if (view === "td" && ["procedure", "inlined", "loop"].indexOf(n.kind) < 0) return;
    if (view === "bu" && n.parent !== "0") return;
    out.push(n);
  });
  out.sort(function (a, b) { return CP.compareValues(a.incl[0], b.incl[0]); });
  var self = this;
  return {
    matches: out.slice(0, 200).map(function (n) {
      return { id: n.id, name: n.name, kind: n.kind, path: self.bundlePath(view, n.id).path.map((p) => p.id) };
    }),
    truncated: out.length > 200
  };
};

CP.Api.prototype.flameTree = function (v, n, metric, min) {
  var self = this;
  var t = { id: n.id, name: n.name, kind: n.kind, module: n.module, proc_id: n.proc_id, v: n.incl[metric] || 0,
    self: n.excl[metric] || 0, children: [] };
  (v.kids.get(n.id) || []).forEach(function (k) {
    if ((k.incl[metric] || 0) > min) t.children.push(self.flameTree(v, k, metric, min));
  });
  return t;
};

CP.Api.prototype.bundleFlame = function (view, id, metric) {
  var v = this.staticView(view);
  var n = v.byId.get(id || "0");
  var total = n.incl[metric] || 0;
  return { metric: metric, total: total, root: this.flameTree(v, n, metric, total * 0.002) };
};

// Merges trees by name (the callees of every frame of a procedure).
CP.mergeTrees = function (into, t) {
  into.v += t.v;
  into.self += t.self;
  t.children.forEach(function (c) {
    var same = into.children.find(function (x) { return x.name === c.name && x.kind === c.kind; });
    if (!same) {
      same = { id: c.id, name: c.name, kind: c.kind, module: c.module, v: 0, self: 0, children: [] };
      into.children.push(same);
    }
    CP.mergeTrees(same, c);
  });
};

CP.Api.prototype.bundleSandwich = function (procId, metric) {
  var bu = this.staticView("bu"), td = this.staticView("td");
  var top = (bu.kids.get("0") || []).find(function (n) { return n.proc_id === procId; });
  if (!top) throw new Error("no procedure " + procId + " in this file");
  var total = top.incl[metric] || 0;
  var callers = this.flameTree(bu, top, metric, total * 0.002);
  var callees = { id: top.id, name: top.name, kind: "procedure", module: top.module, v: 0, self: 0, children: [] };
  var self = this;
  td.byId.forEach(function (n) {
    if (n.kind !== "procedure" || n.proc_id !== procId) return;
    for (var p = td.byId.get(n.parent); p; p = td.byId.get(p.parent))
      if (p.kind === "procedure" && p.proc_id === procId) return; // recursion: outermost only
    CP.mergeTrees(callees, self.flameTree(td, n, metric, total * 0.002));
  });
  return { procedure: { id: procId, name: top.name, module: top.module }, incl: top.incl,
    excl: top.excl, callers: callers, callees: callees };
};

// A stored answer of the bundle (`responses`, keyed by path and query).
CP.Api.prototype.stored = function (key) {
  var r = this.bundle.responses || {};
  return Object.prototype.hasOwnProperty.call(r, key) ? r[key] : null;
};

CP.Api.prototype.bundleThreads = function (id, metric) {
  var r = this.stored("/api/threads?node=" + id);
  if (!r) throw new Error(metric !== 0 ? "this file holds per-thread values of the first metric only"
    : "this file holds per-thread values of the largest top-down scopes only");
  if (metric !== 0) throw new Error("this file holds per-thread values of the first metric only");
  if (!r.profiles) r.profiles = (this.stored("/api/threads") || {}).profiles;
  return r;
};
