// The call graph picture: SVG laid out by Graphviz on the server (the hottest procedures as
// boxes sized and coloured by cost, clustered by load module). Drag pans, the wheel zooms,
// a click on a box selects the procedure (its sandwich in the side pane).
"use strict";
var CP = window.CP || (window.CP = {});

CP.Graph = function (app, host) {
  this.app = app;
  this.host = host;
  var bar = CP.el("div", { cls: "flame-bar" });
  this.count = CP.el("input", { type: "number", min: 5, max: 300, value: 40, id: "graph-nodes", title: "procedures shown" });
  var self = this;
  this.count.addEventListener("change", function () { self.show(); });
  var fit = CP.el("button", { text: "Fit", onclick: function () { self.fit(); } });
  bar.appendChild(CP.el("span", { text: "Call graph (Graphviz). Drag: pan; wheel: zoom; click a box: select. Procedures:" }));
  bar.appendChild(this.count);
  bar.appendChild(fit);
  this.view = CP.el("div", { id: "graph-view" });
  host.appendChild(bar);
  host.appendChild(this.view);
  this.t = { x: 0, y: 0, k: 1 };
  this.bindPanZoom();
};

CP.Graph.prototype.show = async function () {
  var app = this.app;
  this.view.textContent = "laying out…";
  var text;
  try {
    text = await app.api.callgraphSvg(app.metric, +this.count.value || 40);
  } catch (e) {
    this.view.textContent = e.message;
    return;
  }
  if (!text) { this.view.textContent = "No call graph in this file."; return; }
  var doc = new DOMParser().parseFromString(text, "image/svg+xml");
  var svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg") { this.view.textContent = "The call graph is not SVG."; return; }
  svg.querySelectorAll("script, foreignObject").forEach(function (s) { s.remove(); });
  svg.querySelectorAll("a").forEach(function (a) { a.removeAttribute("xlink:href"); a.removeAttribute("href"); });
  this.view.textContent = "";
  this.svg = document.importNode(svg, true);
  this.view.appendChild(this.svg);
  var self = this;
  this.svg.querySelectorAll("g.node").forEach(function (g) {
    g.addEventListener("click", function (e) { e.stopPropagation(); self.pick(g); });
  });
  this.fit();
};

CP.Graph.prototype.pick = function (g) {
  this.svg.querySelectorAll("g.node.sel").forEach(function (x) { x.classList.remove("sel"); });
  g.classList.add("sel");
  var m = /^p(\d+)$/.exec(g.id);
  if (!m) return;
  var title = g.querySelector("title");
  this.app.selectedProc = Number(m[1]);
  this.app.showSide("sandwich").then(() => this.app.sandwich.show(Number(m[1]), title && title.textContent));
};

CP.Graph.prototype.apply = function () {
  if (this.svg) this.svg.style.transform = "translate(" + this.t.x + "px," + this.t.y + "px) scale(" + this.t.k + ")";
};

CP.Graph.prototype.fit = function () {
  if (!this.svg) return;
  var w = parseFloat(this.svg.getAttribute("width")) || this.svg.getBBox().width;
  var h = parseFloat(this.svg.getAttribute("height")) || this.svg.getBBox().height;
  // Graphviz writes pt; the browser maps 1pt to 4/3 px.
  w *= 4 / 3;
  h *= 4 / 3;
  var k = Math.min(this.view.clientWidth / w, this.view.clientHeight / h, 2) || 1;
  this.t = { x: (this.view.clientWidth - w * k) / 2, y: 8, k: k };
  this.apply();
};

CP.Graph.prototype.bindPanZoom = function () {
  var self = this, drag = null;
  this.view.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = self.view.getBoundingClientRect();
    var mx = e.clientX - r.left, my = e.clientY - r.top;
    var f = Math.exp(-e.deltaY / 500);
    var t = self.t;
    t.x = mx - (mx - t.x) * f;
    t.y = my - (my - t.y) * f;
    t.k *= f;
    self.apply();
  }, { passive: false });
  this.view.addEventListener("mousedown", function (e) { drag = { x: e.clientX - self.t.x, y: e.clientY - self.t.y }; });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    self.t.x = e.clientX - drag.x;
    self.t.y = e.clientY - drag.y;
    self.apply();
  });
  window.addEventListener("mouseup", function () { drag = null; });
};
