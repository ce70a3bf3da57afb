// Rendering of the tree table: a header of the chosen columns (click sorts, the columns
// dialog chooses and reorders them) and a virtualized body (rows absolutely placed in a
// spacer as tall as all rows; only those in the viewport plus a margin are built).
"use strict";
var CP = window.CP || (window.CP = {});

// Indentation of a row: 14 px a level for the first 10 levels, then 4 px, so deep
// trees (recursion, long call chains) keep their names and first columns in sight.
CP.indent = function (depth) {
  return depth <= 10 ? depth * 14 : 140 + (depth - 10) * 4;
};

CP.Table = function (app, host) {
  this.app = app;
  this.host = host;
  this.head = CP.el("div", { cls: "tt-head", role: "row" });
  this.body = CP.el("div", { cls: "tt-body", tabindex: "0", role: "treegrid" });
  this.spacer = CP.el("div", { cls: "tt-spacer" });
  // The header scrolls with the body sideways and sticks to its top.
  this.body.appendChild(this.head);
  this.body.appendChild(this.spacer);
  host.appendChild(this.body);
  var self = this;
  this.body.addEventListener("scroll", function () { self.paint(); });
  this.body.addEventListener("click", function (e) { self.onClick(e); });
  this.body.addEventListener("dblclick", function (e) {
    var r = e.target.closest(".tt-row");
    if (r) app.zoomTo(r.dataset.id);
  });
  new ResizeObserver(function () { self.paint(); }).observe(this.body);
};

// A column: {metric: index, incl: bool}. The scope column is always first.
CP.Table.prototype.header = function () {
  var app = this.app, self = this;
  this.head.textContent = "";
  var sortKey = app.sort;
  var scope = CP.el("div", { cls: "tt-cell tt-scope", "data-col": "name", text: "Scope" });
  if (sortKey.name) scope.classList.add("sorted");
  scope.addEventListener("click", function () { app.setSort({ name: true }); });
  this.head.appendChild(scope);
  app.columns.forEach(function (c, i) {
    var m = app.metrics[c.metric];
    var label = m.name + (c.incl ? " (I)" : " (E)");
    var cell = CP.el("div", {
      cls: "tt-cell tt-num", "data-col": i, draggable: "true",
      title: (c.incl ? "inclusive " : "exclusive ") + m.name + (m.formula ? " = " + m.formula : "") +
        (m.unit ? " [" + m.unit + "]" : "") + ". Click: sort; drag: move"
    }, [label]);
    if (!sortKey.name && sortKey.metric === c.metric && sortKey.incl === c.incl) cell.classList.add("sorted");
    cell.addEventListener("click", function () { app.setSort({ metric: c.metric, incl: c.incl }); });
    cell.addEventListener("dragstart", function (e) { e.dataTransfer.setData("text/plain", String(i)); });
    cell.addEventListener("dragover", function (e) { e.preventDefault(); });
    cell.addEventListener("drop", function (e) {
      e.preventDefault();
      app.moveColumn(Number(e.dataTransfer.getData("text/plain")), i);
    });
    self.head.appendChild(cell);
  });
};

CP.Table.prototype.render = function () {
  this.header();
  // The scope column grows with the depth shown, so deep trees keep their names readable.
  var depth = 0;
  this.app.tree.rows.forEach(function (r) { if (r.depth > depth) depth = r.depth; });
  var room = Math.max(380, (this.body.clientWidth || 800) - 2 * 170);
  var scopeW = Math.max(380, Math.min(300 + CP.indent(depth), room));
  this.body.style.setProperty("--scope-w", scopeW + "px");
  var width = scopeW + this.app.columns.length * 170 + "px";
  this.head.style.minWidth = width;
  this.spacer.style.minWidth = width;
  this.spacer.style.height = this.app.tree.rows.length * CP.ROW_HEIGHT + "px";
  this.painted = null;
  this.paint();
};

CP.Table.prototype.paint = function () {
  var tree = this.app.tree;
  if (!tree) return;
  var rows = tree.rows;
  var h = this.body.clientHeight || 600;
  var first = Math.max(0, Math.floor(this.body.scrollTop / CP.ROW_HEIGHT) - 10);
  var last = Math.min(rows.length, first + Math.ceil(h / CP.ROW_HEIGHT) + 20);
  var key = first + ":" + last + ":" + tree.selected + ":" + rows.length;
  if (this.painted === key) return;
  this.painted = key;
  var frag = document.createDocumentFragment();
  for (var i = first; i < last; i++) frag.appendChild(this.row(rows[i], i));
  this.spacer.textContent = "";
  this.spacer.appendChild(frag);
};

CP.Table.prototype.row = function (r, index) {
  var app = this.app, tree = app.tree;
  if (r.more)
    return CP.el("div", { cls: "tt-row more", "data-more-of": r.id, style: "top:" + index * CP.ROW_HEIGHT + "px" }, [
      CP.el("div", { cls: "tt-cell tt-scope muted", style: "padding-left:" + (18 + CP.indent(r.depth)) + "px",
        text: "… " + r.more + " more children, smaller in " + app.metrics[0].name + ": click to load up to 5000" })]);
  var n = tree.nodes.get(r.id);
  var open = tree.expanded.has(n.id) && n.kids;
  var row = CP.el("div", {
    cls: "tt-row kind-" + n.kind + (tree.selected === n.id ? " selected" : "") +
      (tree.hot && tree.hot.has(n.id) ? " hot" : ""),
    role: "row", "data-id": n.id, "data-kind": n.kind, "aria-level": r.depth + 1,
    "aria-expanded": n.has_children ? (open ? "true" : "false") : null,
    style: "top:" + index * CP.ROW_HEIGHT + "px"
  });
  var twisty = CP.el("span", { cls: "twisty", text: n.has_children ? (open ? "▾" : "▸") : "" });
  var scope = CP.el("div", { cls: "tt-cell tt-scope", style: "padding-left:" + (4 + CP.indent(r.depth)) + "px" }, [
    twisty,
    CP.el("span", { cls: "kind", text: CP.kindLabel[n.kind] || n.kind }),
    CP.el("span", { cls: "name", text: n.name, title: n.name }),
    n.where ? CP.el("span", { cls: "where", text: n.where }) : null,
    n.module && n.kind !== "module" ? CP.el("span", { cls: "module", text: "(" + CP.basename(n.module) + ")", title: n.module }) : null
  ]);
  row.appendChild(scope);
  app.columns.forEach(function (c) {
    var m = app.metrics[c.metric];
    var v = (c.incl ? n.incl : n.excl)[c.metric];
    var p = CP.pct(v, m.total);
    var cell = CP.el("div", { cls: "tt-cell tt-num", "data-value": v === null ? "" : v,
      "data-metric": m.name, "data-which": c.incl ? "incl" : "excl" }, [
      CP.el("span", { cls: "val", text: CP.formatValue(v, m.unit) }),
      CP.el("span", { cls: "pct", text: CP.formatPct(p) })
    ]);
    if (p !== null) cell.style.setProperty("--w", Math.max(0, Math.min(100, p)) + "%");
    row.appendChild(cell);
  });
  return row;
};

CP.Table.prototype.onClick = function (e) {
  var r = e.target.closest(".tt-row");
  if (r && r.dataset.moreOf) {
    this.app.loadMore(r.dataset.moreOf);
    return;
  }
  if (!r || !r.dataset.id) return;
  var id = r.dataset.id;
  if (e.target.classList.contains("twisty")) this.app.toggle(id);
  else this.app.select(id);
};

CP.Table.prototype.scrollTo = function (id) {
  var rows = this.app.tree.rows;
  for (var i = 0; i < rows.length; i++) {
    if (rows[i].id !== id) continue;
    var top = i * CP.ROW_HEIGHT, b = this.body;
    if (top < b.scrollTop) b.scrollTop = top;
    else if (top + 2 * CP.ROW_HEIGHT > b.scrollTop + b.clientHeight)
      b.scrollTop = top + 2 * CP.ROW_HEIGHT - b.clientHeight;
    return;
  }
};
