// The tree table of the top-down, bottom-up and flat views: a model of the loaded scopes
// (children are fetched when a row is expanded), the visible-row list (zoom, flatten,
// filter, threshold) and a virtualized rendering: only the rows in the viewport are in
// the DOM, so a tree of any size scrolls at the same speed.
"use strict";
var CP = window.CP || (window.CP = {});

CP.ROW_HEIGHT = 22;

CP.Tree = function (app, view) {
  this.app = app;
  this.view = view;
  this.nodes = new Map(); // id -> node; node.kids: null (not loaded) or [ids]
  this.rootId = null;
  this.expanded = new Set();
  this.zoomStack = []; // ids; the last is the shown root
  this.flatten = 0;
  this.selected = null;
  this.rows = []; // visible rows: {id, depth}
};

CP.Tree.prototype.load = async function () {
  var r = await this.app.api.children(this.view, "0");
  var root = this.add(r.node);
  this.rootId = root.id;
  this.expanded.add(root.id);
  this.setKids(root, r);
};

CP.Tree.prototype.setKids = function (n, r) {
  var self = this;
  var kids = r.children.map(function (k) { k.parentId = n.id; return self.add(k).id; });
  n.kids = (n.kids || []).concat(kids);
  n.more = r.total > n.kids.length ? r.total - n.kids.length : 0;
};

// The next page of a node's children (the server's order: largest of metric 0 first).
CP.Tree.prototype.loadMore = async function (id) {
  var n = this.nodes.get(id);
  if (!n || !n.more) return;
  var r = await this.app.api.children(this.view, id, n.kids.length, 5000);
  if (!r.children.length) n.more = 0;
  else this.setKids(n, r);
};

CP.Tree.prototype.add = function (n) {
  var old = this.nodes.get(n.id);
  if (old && old.kids) n.kids = old.kids;
  this.app.decorate(n);
  this.nodes.set(n.id, n);
  return n;
};

CP.Tree.prototype.ensureKids = async function (id) {
  var n = this.nodes.get(id);
  if (!n || n.kids || !n.has_children) return n;
  if (!n.pending) n.pending = this.app.api.children(this.view, id);
  var r = await n.pending;
  n.pending = null;
  if (!n.kids) this.setKids(n, r);
  return n;
};

CP.Tree.prototype.shownRoot = function () {
  return this.zoomStack.length ? this.zoomStack[this.zoomStack.length - 1] : this.rootId;
};

// The rows under the shown root after flattening `flatten` levels: its children, each
// replaced by its own children `flatten` times (a scope without children stays), as
// `report --flatten N` does.
CP.Tree.prototype.topLevel = async function () {
  var root = await this.ensureKids(this.shownRoot());
  var level = root.kids || [];
  for (var i = 0; i < this.flatten; i++) {
    var next = [];
    for (var j = 0; j < level.length; j++) {
      var n = await this.ensureKids(level[j]);
      if (n && n.kids && n.kids.length) next.push.apply(next, n.kids);
      else next.push(level[j]);
    }
    level = next;
  }
  return level;
};

CP.Tree.prototype.sortedKids = function (ids) {
  var app = this.app, nodes = this.nodes;
  var list = ids.map(function (id) { return nodes.get(id); });
  list.sort(function (a, b) { return app.compareNodes(a, b); });
  return list;
};

// The filter box and the threshold: a row is shown when it passes the threshold and its
// name or a loaded descendant's matches the filter (computed once per refresh, children
// first, so a filter costs one pass over the loaded scopes).
CP.Tree.prototype.passes = function (n) {
  var app = this.app;
  if (app.threshold > 0) {
    var p = app.thresholdPct(n);
    if (p !== null && p < app.threshold) return false;
  }
  return !this.matching || this.matching.has(n.id);
};

CP.Tree.prototype.computeMatches = function () {
  var re = this.app.filterRe;
  this.matching = null;
  if (!re) return;
  var set = new Set(), nodes = this.nodes;
  var stack = [[this.shownRoot(), false]];
  while (stack.length) {
    var top = stack.pop(), n = nodes.get(top[0]);
    if (!top[1]) {
      stack.push([n.id, true]);
      (n.kids || []).forEach(function (k) { stack.push([k, false]); });
    } else if (re.test(n.name) || (n.kids || []).some(function (k) { return set.has(k); })) {
      set.add(n.id);
    }
  }
  this.matching = set;
};

CP.Tree.prototype.computeRows = async function () {
  var top = await this.topLevel();
  this.computeMatches();
  var rows = [], self = this;
  var rootId = this.shownRoot();
  function walk(n, depth) {
    if (depth && !self.passes(n)) return;
    rows.push({ id: n.id, depth: depth });
    if (!self.expanded.has(n.id) || !n.kids) return;
    self.sortedKids(n.id === rootId ? top : n.kids).forEach(function (k) { walk(k, depth + 1); });
    if (n.more) rows.push({ id: n.id, depth: depth + 1, more: n.more });
  }
  this.expanded.add(rootId);
  walk(this.nodes.get(rootId), 0);
  this.rows = rows;
  return rows;
};

CP.Tree.prototype.expand = async function (id) {
  this.expanded.add(id);
  await this.ensureKids(id);
};

CP.Tree.prototype.collapse = function (id) { this.expanded.delete(id); };

CP.Tree.prototype.pathTo = function (id) {
  var path = [];
  for (var n = this.nodes.get(id); n; n = this.nodes.get(n.parentId)) path.unshift(n.id);
  return path;
};

// Hot path: from the selected scope (or the shown root) expand the hottest child while it
// holds at least pct% of its parent's inclusive value of the sort metric.
CP.Tree.prototype.hotPath = async function (pct) {
  var id = this.selected !== null ? this.selected : this.shownRoot();
  var m = this.app.sortMetric();
  var hot = [id];
  for (var guard = 0; guard < 10000; guard++) {
    var n = await this.ensureKids(id);
    this.expanded.add(id);
    if (!n.kids || !n.kids.length) break;
    var best = null;
    for (var i = 0; i < n.kids.length; i++) {
      var k = this.nodes.get(n.kids[i]);
      if (!best || CP.compareValues(k.incl[m], best.incl[m]) < 0) best = k;
    }
    var parentV = n.incl[m], v = best.incl[m];
    if (!parentV || v === null || (100 * v) / parentV < pct) break;
    id = best.id;
    hot.push(id);
  }
  this.hot = new Set(hot);
  this.selected = id;
  return id;
};

CP.Tree.prototype.zoom = function (id) {
  if (id === null || id === this.shownRoot()) return;
  this.zoomStack.push(id);
  this.expanded.add(id);
};

CP.Tree.prototype.unzoom = function () { return this.zoomStack.pop(); };

// Makes the nodes of a path from the root (as /api/node gives it) rows of the tree, also
// when one is beyond the loaded page of its parent's children.
CP.Tree.prototype.adopt = async function (path) {
  for (var i = 0; i < path.length; i++) {
    var n = this.nodes.get(path[i].id) || this.add(path[i]);
    if (i === 0) continue;
    var parent = await this.ensureKids(path[i - 1].id);
    parent.kids = parent.kids || [];
    n.parentId = parent.id;
    if (parent.kids.indexOf(n.id) < 0) {
      parent.kids.push(n.id);
      parent.more = Math.max(0, (parent.more || 0) - 1);
    }
  }
};

// Expands every ancestor of a node known by its path of ids from the root.
CP.Tree.prototype.reveal = async function (path) {
  for (var i = 0; i < path.length - 1; i++) {
    if (!this.nodes.has(path[i])) return false;
    await this.expand(path[i]);
  }
  this.selected = path[path.length - 1];
  return this.nodes.has(this.selected);
};

// Re-fetches every loaded node (after a change of thread or statistic), keeping what was
// expanded, zoomed and selected when the ids still exist.
CP.Tree.prototype.reload = async function () {
  var expanded = Array.from(this.expanded);
  var zoom = this.zoomStack.slice();
  this.nodes = new Map();
  this.expanded = new Set();
  await this.load();
  for (var i = 0; i < expanded.length; i++)
    if (this.nodes.has(expanded[i])) await this.expand(expanded[i]);
  this.zoomStack = zoom.filter((z) => this.nodes.has(z));
};
