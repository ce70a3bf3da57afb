// Sync objects: the waits by synchronization object of the run (GET /api/sync: mutexes,
// condition variables, barriers, joined threads of -e wait; MPI communicators with their
// tags and peers), heaviest first, each with its top waiting call site. The same rows as
// `callpath report --view sync`; the pane does not depend on the selected row.
"use strict";
var CP = window.CP || (window.CP = {});

CP.Api.prototype.syncObjects = function () {
  if (!this.bundle) return this.get("/api/sync");
  var r = this.stored("/api/sync");
  return r ? Promise.resolve(r) : Promise.reject(new Error("this file holds no sync objects"));
};

CP.SyncPane = function (app, host) {
  this.app = app;
  this.host = host;
  this.loaded = false;
};

CP.SyncPane.prototype.show = async function () {
  if (this.loaded) return;
  var host = this.host, r;
  host.textContent = "";
  try {
    r = await this.app.api.syncObjects();
  } catch (e) {
    host.appendChild(CP.el("div", { cls: "src-missing", text: "Sync objects unavailable: " + e.message }));
    return;
  }
  this.loaded = true;
  if (!r.objects.length) {
    host.appendChild(CP.el("div", { cls: "src-missing",
      text: "No waits by synchronization object (record with -e wait, or an MPI program)." }));
    return;
  }
  var box = CP.el("div", { cls: "thr sync" });
  box.appendChild(CP.el("div", { cls: "src-head" }, [CP.el("b", { text: "Waits by synchronization object" }),
    CP.el("span", { cls: "muted", text: "  " + CP.formatValue(r.wait_ns, "ns") + " in " + r.waits +
      " waits, " + r.total + " objects" })]));
  var head = CP.el("tr", null, ["object", "kind", "wait time", "%", "waits", "top call site"].map(function (h) {
    return CP.el("th", { text: h });
  }));
  var body = r.objects.map(function (o) {
    return CP.el("tr", { "data-kind": o.kind }, [
      CP.el("td", { text: o.name, title: "pid " + o.pid }),
      CP.el("td", { text: o.kind }),
      CP.el("td", { cls: "num", text: CP.formatValue(o.wait_ns, "ns") }),
      CP.el("td", { cls: "num", text: CP.formatPct(100 * o.share) }),
      CP.el("td", { cls: "num", text: String(o.waits) }),
      CP.el("td", { text: o.site || "?" })]);
  });
  box.appendChild(CP.el("table", { cls: "stats sync-objects" }, [CP.el("thead", null, [head]),
    CP.el("tbody", null, body)]));
  if (r.total > r.objects.length)
    box.appendChild(CP.el("p", { cls: "muted", text: "the " + r.objects.length + " heaviest of " + r.total }));
  host.appendChild(box);
};
