// The data layer: the server's JSON API (docs/cmd-view.md, "HTTP API"), or, in the
// self-contained file written by `callpath view --html`, the same calls answered from the
// bundle inlined in the page. The rest of the front end only calls CP.Api's methods.
"use strict";
var CP = window.CP || (window.CP = {});

CP.Api = function () {
  var el = document.getElementById("callpath-bundle");
  this.bundle = el ? JSON.parse(el.textContent) : null;
  this.derived = []; // [{name, formula, fn}] user formulas
  this.sel = { stat: "sum", thread: "", rank: "" };
  if (this.bundle) this.indexBundle();
};

CP.Api.prototype.query = function (params) {
  var q = [];
  var all = Object.assign({}, params);
  if (this.sel.stat !== "sum") all.stat = this.sel.stat;
  if (this.sel.thread !== "") all.thread = this.sel.thread;
  if (this.sel.rank !== "") all.rank = this.sel.rank;
  Object.keys(all).forEach(function (k) {
    if (all[k] !== undefined && all[k] !== null) q.push(k + "=" + encodeURIComponent(all[k]));
  });
  this.derived.forEach(function (d) { q.push("derived=" + encodeURIComponent(d.name + "=" + d.formula)); });
  return q.join("&");
};

// fetch, asked again while the server answers 202 (the whole profile loading on its
// background thread; docs/cmd-view.md, "Loading"), after its Retry-After seconds.
CP.Api.prototype.fetchReady = async function (url) {
  for (;;) {
    var r = await fetch(url, { credentials: "same-origin" });
    if (r.status !== 202) return r;
    if (this.onLoading) this.onLoading(true);
    var wait = parseFloat(r.headers.get("Retry-After")) || 1;
    await new Promise(function (ok) { setTimeout(ok, Math.min(wait, 10) * 1000); });
    if (this.onLoading) this.onLoading(false);
  }
};

CP.Api.prototype.get = async function (path, params) {
  var r = await this.fetchReady(path + "?" + this.query(params || {}));
  var body = await r.text();
  var j = null;
  try { j = JSON.parse(body); } catch (e) { /* not JSON: an error page */ }
  if (!r.ok) throw new Error((j && j.error) || path + ": HTTP " + r.status);
  return j;
};

CP.Api.prototype.info = function () {
  return this.bundle ? Promise.resolve(this.bundle.info) : this.get("/api/info");
};

CP.Api.prototype.metrics = async function () {
  if (!this.bundle) return (await this.get("/api/metrics")).metrics;
  // The static file evaluates derived formulas itself, over the database's metrics.
  var ms = this.bundle.metrics.metrics.slice();
  var names = ms.map(function (m) { return m.name; });
  this.derived.forEach(function (d) { if (!d.fn) d.fn = CP.parseFormula(d.formula, names); });
  this.applyDerived();
  var root = this.views.td.byId.get("0");
  this.derived.forEach(function (d, i) {
    ms.push({ id: ms.length, name: d.name, unit: "", kind: "derived", formula: d.formula,
      samples: 0, total: root ? d.fn(root.incl0) : null, user: i });
  });
  return ms;
};

// Adds a derived metric. The server checks the formula (report's parser and message);
// the static file checks it with expr.js.
CP.Api.prototype.addDerived = async function (name, formula, names) {
  var fn = CP.parseFormula(formula, names);
  this.derived.push({ name: name, formula: formula, fn: fn });
  if (this.bundle) return;
  try {
    await this.get("/api/metrics");
  } catch (e) {
    this.derived.pop();
    throw e;
  }
};

// One page of a node's children: the server sends the largest first (by metric 0).
CP.Api.prototype.children = async function (view, id, offset, limit) {
  if (this.bundle) return this.bundleChildren(view, id);
  var r = await this.get("/api/children", { view: view, node: id, limit: limit || 500, offset: offset || 0 });
  return { node: r.node, children: r.children, total: r.total_children };
};

CP.Api.prototype.node = function (view, id) {
  if (this.bundle) return Promise.resolve(this.bundlePath(view, id));
  return this.get("/api/node", { view: view, node: id });
};

CP.Api.prototype.search = function (view, q) {
  if (this.bundle) return Promise.resolve(this.bundleSearch(view, q));
  return this.get("/api/search", { view: view, q: q, limit: 200 });
};

CP.Api.prototype.source = function (fileId) {
  if (!this.bundle) return this.get("/api/source", { file: fileId });
  var s = this.stored("/api/source?file=" + fileId);
  return Promise.resolve(s || { file: { id: fileId, path: null }, available: false,
    reason: "the source is not in this file", lines: [], costs: {}, loops: [], inlined: [] });
};

CP.Api.prototype.flame = function (view, id, metric) {
  if (this.bundle) return Promise.resolve(this.bundleFlame(view, id, metric));
  return this.get("/api/flame", { view: view, node: id, metric: metric, min: 0.002 });
};

CP.Api.prototype.sandwich = function (procId, metric) {
  if (this.bundle) return Promise.resolve(this.bundleSandwich(procId, metric));
  return this.get("/api/sandwich", { proc: procId, metric: metric, min: 0.002 });
};

CP.Api.prototype.callgraphSvg = async function (metric, nodes) {
  if (this.bundle) {
    if (metric !== 0) throw new Error("this file holds the call graph of the first metric only");
    return this.stored("/api/callgraph") || null;
  }
  var r = await this.fetchReady("/api/callgraph?" + this.query({ metric: metric, nodes: nodes, format: "svg" }));
  if (!r.ok) throw new Error("call graph: HTTP " + r.status + " " + (await r.text()));
  return r.text();
};

CP.Api.prototype.profiles = async function () {
  if (this.bundle) return (this.stored("/api/threads") || {}).profiles || [];
  var r = await this.fetchReady("/api/threads");
  return r.ok ? (await r.json()).profiles : [];
};

CP.Api.prototype.threadValues = function (id, metric) {
  if (this.bundle) return Promise.resolve(this.bundleThreads(id, metric));
  var saved = this.sel;
  this.sel = { stat: "sum", thread: "", rank: "" }; // the distribution is over all threads
  var view = { b: "bu", f: "flat" }[String(id).charAt(0)]; // a row of the view it is of
  var p = this.get("/api/threads", { node: id, metric: metric, view: view });
  this.sel = saved;
  return p;
};

CP.Api.prototype.version = function () {
  if (this.bundle) return Promise.resolve({ generation: 0, live: false });
  return this.get("/api/version");
};
