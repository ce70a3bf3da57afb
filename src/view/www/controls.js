// The toolbar, the columns dialog, the thread/statistic selector and the keyboard.
"use strict";
var CP = window.CP || (window.CP = {});

CP.App.prototype.selKey = function () {
  var s = this.api.sel;
  if (s.thread !== "") return "t" + s.thread;
  if (s.rank !== "") return "r" + s.rank;
  return s.stat === "sum" ? null : s.stat;
};

CP.App.prototype.selFromKey = function (k) {
  var s = { stat: "sum", thread: "", rank: "" };
  if (!k) return s;
  if (k[0] === "t" && /^\d+$/.test(k.slice(1))) s.thread = k.slice(1);
  else if (k[0] === "r" && /^\d+$/.test(k.slice(1))) s.rank = k.slice(1);
  else if (["mean", "min", "max", "stddev"].indexOf(k) >= 0) s.stat = k;
  return s;
};

CP.App.prototype.fillMetricSelect = function () {
  var sel = this.$("metric");
  sel.textContent = "";
  this.metrics.forEach(function (m, i) {
    sel.appendChild(CP.el("option", { value: i, text: m.name + (m.unit ? " (" + m.unit + ")" : "") }));
  });
  sel.value = this.metric;
};

CP.App.prototype.fillThreadSelect = function () {
  var sel = this.$("threadsel");
  sel.textContent = "";
  var opt = function (v, t) { sel.appendChild(CP.el("option", { value: v, text: t })); };
  opt("", "all (sum)");
  if (!this.api.bundle) {
    ["mean", "min", "max", "stddev"].forEach(function (s) { opt(s, "all (" + s + ")"); });
    var ranks = new Set();
    this.profiles.forEach(function (p) {
      if (p.rank !== null && p.rank !== undefined && p.rank >= 0) ranks.add(p.rank);
    });
    if (ranks.size > 1) ranks.forEach(function (r) { opt("r" + r, "rank " + r); });
    this.profiles.forEach(function (p) { opt("t" + p.id, CP.profileLabel(p)); });
  }
  sel.value = this.selKey() || "";
};

CP.profileLabel = function (p) {
  var s = (p.rank !== null && p.rank !== undefined && p.rank >= 0 ? "rank " + p.rank + " " : "") +
    "pid " + p.pid + " thread " + p.tidx;
  return p.thread_name ? s + " " + p.thread_name : s;
};

CP.App.prototype.changeSelection = async function (key) {
  this.api.sel = this.selFromKey(key);
  this.status("loading…");
  this.metrics = await this.api.metrics();
  for (var k in this.trees) await this.trees[k].reload();
  this.summary();
  await this.showView(this.view);
};

CP.App.prototype.buildToolbar = function () {
  var app = this;
  var on = function (id, ev, fn) { app.$(id).addEventListener(ev, fn); };
  this.fillMetricSelect();
  this.fillThreadSelect();
  document.querySelectorAll("#tabs button").forEach(function (b) {
    b.addEventListener("click", function () { app.showView(b.dataset.view); });
  });
  document.querySelectorAll("#right-tabs button").forEach(function (b) {
    b.addEventListener("click", function () { app.showSide(b.dataset.pane); });
  });
  on("metric", "change", function (e) { app.setMetric(+e.target.value); });
  on("threadsel", "change", function (e) { app.changeSelection(e.target.value); });
  on("filter", "input", function (e) {
    app.setFilter(e.target.value);
    app.refresh().then(function () { app.saveHash(); });
  });
  on("filter", "keydown", function (e) {
    if (e.key === "Enter") { e.preventDefault(); app.findNext(); }
    if (e.key === "Escape") { e.target.blur(); app.table.body.focus(); }
  });
  on("find-next", "click", function () { app.findNext(); });
  on("threshold", "change", function (e) {
    app.threshold = Math.max(0, +e.target.value || 0);
    app.refresh().then(function () { app.saveHash(); });
  });
  on("hot", "click", function () { app.hotPath(); });
  on("zoom", "click", function () { app.zoomTo(app.tree && app.tree.selected); });
  on("unzoom", "click", function () { app.unzoom(); });
  on("flatten", "click", function () { app.setFlatten(1); });
  on("unflatten", "click", function () { app.setFlatten(-1); });
  on("expand-all", "click", function () { app.expandLoaded(); });
  on("collapse-all", "click", function () {
    app.tree.expanded = new Set([app.tree.shownRoot()]);
    app.refresh().then(function () { app.saveHash(); });
  });
  on("columns-btn", "click", function () { app.columnsDialog(); });
  on("derived-add", "click", function () { app.addDerived(); });
};

CP.App.prototype.setMetric = async function (m) {
  this.metric = m;
  if (!this.sort.name) this.sort = { metric: m, incl: this.sort.incl };
  if (!this.columns.some(function (c) { return c.metric === m; }))
    this.columns.unshift({ metric: m, incl: true }, { metric: m, incl: false });
  if (this.view === "flame") await this.flame.show();
  else if (this.view === "graph") await this.graph.show();
  else await this.refresh();
  if (this.selectedNode) await this.updateSide(this.selectedNode);
  this.saveHash();
};

CP.App.prototype.hotPath = async function () {
  if (!this.tableView()) return;
  var id = await this.tree.hotPath(+this.$("hotpct").value || 50);
  await this.refresh();
  await this.select(id);
  this.saveHash();
};

CP.App.prototype.setFlatten = async function (d) {
  if (this.view !== "flat") return;
  this.tree.flatten = Math.max(0, this.tree.flatten + d);
  await this.refresh();
  this.saveHash();
};

// Expands the subtree of the selection, a level at a time with the level's requests in
// parallel (bounded: at most 2000 rows fetched).
CP.App.prototype.expandLoaded = async function () {
  var t = this.tree;
  var level = [t.selected !== null ? t.selected : t.shownRoot()];
  for (var count = 0; level.length && count < 2000; ) {
    var ns = await Promise.all(level.map((id) => t.ensureKids(id)));
    var next = [];
    ns.forEach(function (n) {
      t.expanded.add(n.id);
      count++;
      (n.kids || []).forEach(function (k) { if (t.nodes.get(k).has_children) next.push(k); });
    });
    level = next.slice(0, Math.max(0, 2000 - count));
  }
  await this.refresh();
  this.saveHash();
};

CP.App.prototype.columnsDialog = function () {
  var app = this;
  var list = this.$("columns-list");
  list.textContent = "";
  this.metrics.forEach(function (m, i) {
    [true, false].forEach(function (incl) {
      var idx = app.columns.findIndex(function (c) { return c.metric === i && c.incl === incl; });
      var box = CP.el("input", { type: "checkbox", checked: idx >= 0 });
      box.addEventListener("change", function () {
        var j = app.columns.findIndex(function (c) { return c.metric === i && c.incl === incl; });
        if (box.checked && j < 0) app.columns.push({ metric: i, incl: incl });
        if (!box.checked && j >= 0) app.columns.splice(j, 1);
        app.table.render();
        app.saveHash();
      });
      var move = function (d) {
        var j = app.columns.findIndex(function (c) { return c.metric === i && c.incl === incl; });
        if (j >= 0 && j + d >= 0 && j + d < app.columns.length) app.moveColumn(j, j + d);
      };
      list.appendChild(CP.el("div", { cls: "colrow" }, [box,
        CP.el("span", { text: m.name + (incl ? " inclusive" : " exclusive") + (m.formula ? " = " + m.formula : "") }),
        CP.el("button", { type: "button", text: "↑", title: "move left", onclick: function () { move(-1); } }),
        CP.el("button", { type: "button", text: "↓", title: "move right", onclick: function () { move(1); } })]));
    });
  });
  this.$("columns-dlg").showModal();
};

CP.App.prototype.addDerived = async function () {
  var name = this.$("derived-name").value.trim();
  var formula = this.$("derived-formula").value.trim();
  var err = this.$("derived-err");
  err.textContent = "";
  var names = this.metrics.map(function (m) { return m.name; });
  if (!/^[A-Za-z_][A-Za-z0-9_.:-]*$/.test(name) || names.indexOf(name) >= 0) {
    err.textContent = "a new metric name (letters, digits, _ . : -) is needed";
    return;
  }
  try {
    await this.api.addDerived(name, formula, names);
  } catch (e) {
    err.textContent = e.message;
    return;
  }
  this.metrics = await this.api.metrics();
  var id = this.metrics.length - 1;
  this.columns.push({ metric: id, incl: true }, { metric: id, incl: false });
  for (var k in this.trees) await this.trees[k].reload();
  this.fillMetricSelect();
  this.columnsDialog();
  await this.refresh();
  this.saveHash();
};

CP.bindKeys = function (app) {
  document.addEventListener("keydown", function (e) {
    var tag = e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (document.querySelector("dialog[open]")) return;
    var keys = {
      "/": function () { app.$("filter").focus(); app.$("filter").select(); },
      "1": function () { app.showView("top-down"); }, "2": function () { app.showView("bottom-up"); },
      "3": function () { app.showView("flat"); }, "4": function () { app.showView("flame"); },
      "5": function () { app.showView("graph"); },
      h: function () { app.hotPath(); }, z: function () { app.zoomTo(app.tree.selected); },
      b: function () { app.unzoom(); }, f: function () { app.setFlatten(1); },
      u: function () { app.setFlatten(-1); }, n: function () { app.findNext(); },
      "*": function () { app.expandLoaded(); }
    };
    var fn = keys[e.key] || (app.tableView() && CP.treeKeys(app, e.key));
    if (!fn) return;
    e.preventDefault();
    fn();
  });
};

// Arrows: up/down move, right expands (then goes to the first child), left collapses
// (then goes to the parent), Enter zooms, Home/End, PageUp/PageDown.
CP.treeKeys = function (app, key) {
  var t = app.tree, rows = t.rows;
  var i = rows.findIndex(function (r) { return r.id === t.selected; });
  var go = function (j) {
    j = Math.max(0, Math.min(rows.length - 1, j));
    if (rows[j]) app.select(rows[j].id);
  };
  var page = Math.max(1, Math.floor(app.table.body.clientHeight / CP.ROW_HEIGHT) - 1);
  var cur = i >= 0 ? t.nodes.get(rows[i].id) : null;
  var map = {
    ArrowDown: function () { go(i + 1); }, ArrowUp: function () { go(i < 0 ? 0 : i - 1); },
    PageDown: function () { go(i + page); }, PageUp: function () { go(i - page); },
    Home: function () { go(0); }, End: function () { go(rows.length - 1); },
    Enter: function () { app.zoomTo(t.selected); },
    ArrowRight: function () {
      if (!cur || !cur.has_children) return;
      if (!t.expanded.has(cur.id) || !cur.kids) app.toggle(cur.id);
      else go(i + 1);
    },
    ArrowLeft: function () {
      if (!cur) return;
      if (t.expanded.has(cur.id) && cur.kids && cur.id !== t.shownRoot()) app.toggle(cur.id);
      else if (t.nodes.has(cur.parentId)) {
        var pi = rows.findIndex(function (r) { return r.id === cur.parentId; });
        if (pi >= 0) go(pi);
      }
    }
  };
  return map[key];
};
