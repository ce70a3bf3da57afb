// The application: state (view, metrics, columns, sort, filter, selection), the toolbar,
// the views and panes, and the URL hash that keeps them (a link opens the same place).
"use strict";
var CP = window.CP || (window.CP = {});

CP.VIEWS = { "top-down": "td", "bottom-up": "bu", flat: "flat" };

CP.App = function () {
  this.api = new CP.Api();
  var self = this;
  this.api.onLoading = function (on) { if (on) self.status("loading the whole profile…"); };
  this.trees = {};
  this.tree = null;
  this.view = "top-down";
  this.metric = 0; // the metric of the source heat, flame graph, call graph, threads
  this.columns = [];
  this.sort = { metric: 0, incl: true };
  this.threshold = 0;
  this.filterRe = null;
  this.found = { q: null, matches: [], next: 0 };
  this.side = "source";
};

CP.App.prototype.$ = function (id) { return document.getElementById(id); };

CP.App.prototype.status = function (text, isError) {
  var s = this.$("status");
  s.textContent = text || "";
  s.classList.toggle("error", !!isError);
};

CP.App.prototype.start = async function () {
  var h = CP.readHash();
  this.info = await this.api.info();
  if (h.d) {
    h.d.split(";").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) this.api.derived.push({ name: kv.slice(0, i), formula: kv.slice(i + 1) });
    }, this);
  }
  if (h.th) this.api.sel = this.selFromKey(h.th);
  this.metrics = await this.api.metrics();
  this.profiles = await this.api.profiles();
  this.setupColumns(h.cols);
  if (h.s) this.sort = h.s === "name" ? { name: true } : { metric: +h.s.split(":")[0] || 0, incl: h.s.split(":")[1] !== "e" };
  this.metric = Math.min(+h.m || 0, this.metrics.length - 1);
  this.threshold = +h.t || 0;
  this.$("threshold").value = this.threshold;
  if (h.f) { this.$("filter").value = h.f; this.setFilter(h.f); }
  this.buildToolbar(h);
  this.source = new CP.SourcePane(this, this.$("source"));
  this.threads = new CP.ThreadsPane(this, this.$("threads"));
  this.sandwich = new CP.Sandwich(this, this.$("sandwich"));
  this.sync = new CP.SyncPane(this, this.$("sync"));
  this.flame = new CP.Flame(this, this.$("flame"));
  this.graph = new CP.Graph(this, this.$("graph"));
  this.table = new CP.Table(this, this.$("table"));
  CP.bindKeys(this);
  this.summary();
  await this.showView(h.v || "top-down", h);
  if (h.side) this.showSide(h.side);
  if (this.info.live) this.poll();
};

CP.App.prototype.summary = function () {
  var i = this.info;
  var m = this.metrics[0];
  var cmd = (i.command || i.name || "").split(" ");
  cmd[0] = CP.basename(cmd[0]);
  this.$("summary").title = i.command || i.name || "";
  this.$("summary").textContent = [cmd.join(" "), i.nprofiles ? i.nprofiles + " threads" : "",
    i.nranks > 1 ? i.nranks + " ranks" : "", i.duration_s ? i.duration_s.toFixed(2) + " s" : "",
    m ? m.name + " " + CP.formatValue(m.total, m.unit) : "", i.static ? "(static file)" : "",
    i.live ? "(live)" : ""].filter(Boolean).join(" · ");
};

CP.App.prototype.setupColumns = function (spec) {
  var n = this.metrics.length;
  if (spec) {
    this.columns = spec.split(",").map(function (c) {
      return { metric: parseInt(c, 10), incl: c.slice(-1) !== "e" };
    }).filter(function (c) { return c.metric >= 0 && c.metric < n; });
  }
  if (!this.columns.length) {
    // Every metric's inclusive and exclusive columns, up to 4 metrics by default.
    for (var i = 0; i < Math.min(n, 4); i++) this.columns.push({ metric: i, incl: true }, { metric: i, incl: false });
  }
};

CP.App.prototype.decorate = function (n) {
  if (n.file && n.line && (n.kind === "procedure" || n.kind === "inlined" || n.kind === "caller"))
    n.where = CP.basename(n.file) + ":" + n.line;
  else if (n.kind === "line" && n.procedure && n.name.indexOf(" in ") < 0) n.where = "in " + n.procedure;
};

CP.App.prototype.sortMetric = function () { return this.sort.name ? 0 : this.sort.metric; };

CP.App.prototype.compareNodes = function (a, b) {
  if (this.sort.name) return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  var k = this.sort.incl ? "incl" : "excl";
  var c = CP.compareValues(a[k][this.sort.metric], b[k][this.sort.metric]);
  return c || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
};

CP.App.prototype.thresholdPct = function (n) {
  var m = this.sortMetric();
  return CP.pct(n.incl[m], this.metrics[m].total);
};

CP.App.prototype.tableView = function () { return CP.VIEWS[this.view] !== undefined; };

CP.App.prototype.showView = async function (view, h) {
  if (view === "flame" || view === "graph") {
    this.view = view;
  } else {
    this.view = CP.VIEWS[view] ? view : "top-down";
    var key = CP.VIEWS[this.view];
    if (!this.trees[key]) {
      this.status("loading…");
      var t = new CP.Tree(this, key);
      await t.load();
      this.trees[key] = t;
      if (h) await this.restoreTree(t, h);
    }
    this.tree = this.trees[key];
  }
  var self = this;
  document.querySelectorAll("#tabs button").forEach(function (b) {
    b.classList.toggle("on", b.dataset.view === self.view);
    b.setAttribute("aria-selected", b.dataset.view === self.view);
  });
  this.$("table").hidden = !this.tableView();
  this.$("flame").hidden = this.view !== "flame";
  this.$("graph").hidden = this.view !== "graph";
  document.body.dataset.view = this.view;
  if (this.view === "flame") await this.flame.show(h && h.fz);
  else if (this.view === "graph") await this.graph.show();
  else await this.refresh();
  this.status("");
  this.saveHash();
};

CP.App.prototype.restoreTree = async function (t, h) {
  t.flatten = +h.fl || 0;
  if (h.z) {
    for (var z of h.z.split(",")) {
      var r = await this.api.node(t.view, z).catch(() => null);
      if (!r) continue;
      await t.adopt(r.path);
      if (await t.reveal(r.path.map((p) => p.id))) t.zoom(z);
    }
  }
  if (h.sel) {
    var p = await this.api.node(t.view, h.sel).catch(() => null);
    if (p) {
      await t.adopt(p.path);
      await t.reveal(p.path.map((n) => n.id));
    }
  }
  if (h.hot) await t.hotPath(+h.hot);
};

CP.App.prototype.refresh = async function () {
  if (!this.tableView()) return;
  await this.tree.computeRows();
  this.table.render();
  var rows = this.tree.rows.length;
  this.$("flatten").disabled = this.view !== "flat";
  this.$("unflatten").disabled = this.view !== "flat" || !this.tree.flatten;
  this.$("unzoom").disabled = !this.tree.zoomStack.length;
  this.$("table").dataset.rows = rows;
};

CP.App.prototype.saveHash = function () {
  var t = this.tree;
  var d = this.api.derived.map(function (x) { return x.name + "=" + x.formula; }).join(";");
  CP.writeHash({
    v: this.view, m: this.metric || null,
    s: this.sort.name ? "name" : this.sort.metric + ":" + (this.sort.incl ? "i" : "e"),
    cols: this.columns.map(function (c) { return c.metric + (c.incl ? "i" : "e"); }).join(","),
    sel: t && t.selected, z: t && t.zoomStack.join(","), fl: t && t.flatten || null,
    t: this.threshold || null, f: this.$("filter").value, d: d, th: this.selKey(),
    side: this.side !== "source" ? this.side : null, fz: this.view === "flame" ? this.flame.rootId : null
  });
};

CP.App.prototype.select = async function (id, opts) {
  var t = this.tree;
  t.selected = id;
  this.table.paint();
  this.table.scrollTo(id);
  this.saveHash();
  var n = t.nodes.get(id);
  if (n) await this.updateSide(n, opts);
};

CP.App.prototype.updateSide = async function (n) {
  this.selectedNode = n;
  if (this.side === "source") await this.source.show(n);
  else if (this.side === "threads") await this.threads.show(n);
  else if (this.side === "sandwich") await this.sandwich.show(n.proc_id, n.name);
};

CP.App.prototype.showSide = async function (side) {
  this.side = side;
  var self = this;
  document.querySelectorAll("#right-tabs button").forEach(function (b) { b.classList.toggle("on", b.dataset.pane === side); });
  ["source", "threads", "sandwich", "sync"].forEach(function (p) { self.$(p).hidden = p !== side; });
  if (side === "sync") await this.sync.show(); // all objects: not the selected row's
  else if (this.selectedNode) await this.updateSide(this.selectedNode);
  else if (this.tree && this.tree.selected !== null) {
    var n = this.tree.nodes.get(this.tree.selected);
    if (n) await this.updateSide(n);
  }
  this.saveHash();
};

CP.App.prototype.toggle = async function (id) {
  var t = this.tree;
  if (t.expanded.has(id)) t.collapse(id);
  else await t.expand(id);
  await this.refresh();
  this.saveHash();
};

CP.App.prototype.loadMore = async function (id) {
  this.status("loading…");
  await this.tree.loadMore(id);
  await this.refresh();
  this.status("");
};

CP.App.prototype.zoomTo = async function (id) {
  if (!this.tableView() || id === null || id === undefined) return;
  this.tree.zoom(id);
  await this.refresh();
  this.saveHash();
};

CP.App.prototype.unzoom = async function () {
  if (!this.tree.unzoom()) return;
  await this.refresh();
  this.table.scrollTo(this.tree.selected);
  this.saveHash();
};

CP.App.prototype.setSort = async function (s) {
  this.sort = s;
  await this.refresh();
  this.saveHash();
};

CP.App.prototype.moveColumn = function (from, to) {
  var c = this.columns.splice(from, 1)[0];
  if (c) this.columns.splice(to, 0, c);
  this.table.render();
  this.saveHash();
};

CP.App.prototype.setFilter = function (text) {
  var box = this.$("filter");
  try {
    this.filterRe = text ? new RegExp(text, "i") : null;
    box.classList.remove("bad");
  } catch (e) {
    box.classList.add("bad");
    this.filterRe = null;
  }
};

// Find: the server searches the whole view (not only the loaded rows); each press jumps
// to the next match, expanding the path to it.
CP.App.prototype.findNext = async function () {
  var q = this.$("filter").value;
  if (!q || !this.tableView()) return;
  if (this.found.q !== q || this.found.view !== this.view) {
    try {
      var r = await this.api.search(this.tree.view, q);
      this.found = { q: q, view: this.view, matches: r.matches, next: 0 };
    } catch (e) {
      this.status(e.message, true);
      return;
    }
  }
  var f = this.found;
  if (!f.matches.length) { this.status("no match for " + q); return; }
  var m = f.matches[f.next % f.matches.length];
  f.next++;
  this.tree.zoomStack = [];
  var p = await this.api.node(this.tree.view, m.id).catch(() => null);
  if (p) await this.tree.adopt(p.path);
  await this.tree.reveal(m.path);
  await this.refresh();
  await this.select(m.id);
  this.status("match " + (((f.next - 1) % f.matches.length) + 1) + " of " + f.matches.length);
};

CP.App.prototype.poll = function () {
  var self = this;
  var gen = this.info.generation;
  setInterval(async function () {
    var v = await self.api.version().catch(() => null);
    if (!v || v.generation === gen) return;
    gen = v.generation;
    self.status("the profile changed: reloading");
    await self.reloadAll();
  }, 2000);
};

CP.App.prototype.reloadAll = async function () {
  this.metrics = await this.api.metrics();
  for (var k in this.trees) await this.trees[k].reload();
  this.summary();
  await this.showView(this.view);
};

window.addEventListener("DOMContentLoaded", function () {
  var app = new CP.App();
  window.cpApp = app; // for the browser tests and the console
  app.start().then(function () { document.body.dataset.ready = "1"; }, function (e) {
    app.status(e.message, true);
    document.body.dataset.ready = "error";
    console.error(e);
  });
});
