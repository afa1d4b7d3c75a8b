// ringactor dashboard: polls the admin endpoints and draws with SVG. No
// dependencies, no inline code (the page's Content-Security-Policy forbids
// it). The rate and p99 history is kept here, from the polls.
"use strict";
(function () {
  const POLL_MS = Math.max(200, Number(new URLSearchParams(location.search).get("interval_ms")) || 1000);
  const HISTORY_MS = 5 * 60 * 1000; // the line chart's window
  const SVGNS = "http://www.w3.org/2000/svg";

  const state = {
    kernels: [], prev: null, rates: {}, history: {}, selected: null,
    sortKey: "name", sortDir: 1, filter: "", ok: true,
  };

  // --- helpers -------------------------------------------------------
  const $ = (sel) => document.querySelector(sel);
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmtNs(ns) {
    if (!ns) return "–";
    if (ns < 1e3) return ns.toFixed(0) + " ns";
    if (ns < 1e6) return (ns / 1e3).toFixed(ns < 1e4 ? 2 : 1) + " µs";
    if (ns < 1e9) return (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1) + " ms";
    return (ns / 1e9).toFixed(2) + " s";
  }
  function fmtNum(n) {
    if (n === undefined || n === null) return "–";
    if (n >= 1e9) return (n / 1e9).toFixed(2) + "G";
    if (n >= 1e6) return (n / 1e6).toFixed(2) + "M";
    if (n >= 1e4) return (n / 1e3).toFixed(1) + "k";
    return String(Math.round(n));
  }
  function fillClass(f) { return f >= 0.75 ? "high" : f >= 0.25 ? "mid" : "low"; }
  function fillColor(f) {
    // green → amber → red as the rings fill
    f = Math.max(0, Math.min(1, f));
    const a = [47, 158, 91], b = [215, 154, 30], c = [210, 69, 59];
    const [x, y, t] = f < 0.5 ? [a, b, f * 2] : [b, c, (f - 0.5) * 2];
    return "rgb(" + x.map((v, i) => Math.round(v + (y[i] - v) * t)).join(",") + ")";
  }
  async function getJSON(path) {
    const r = await fetch(path, { cache: "no-store", headers: { Accept: "application/json" } });
    if (!r.ok) throw new Error(path + ": " + r.status);
    return r.json();
  }
  function setStatus(ok, text) {
    const s = $("#status");
    s.textContent = text;
    s.className = "status " + (ok ? "ok" : "bad");
  }

  // --- kernels -------------------------------------------------------
  async function pollKernels() {
    const snap = await getJSON("kernels");
    const t = Date.parse(snap.time);
    const prev = state.prev;
    state.rates = {};
    for (const k of snap.kernels) {
      let rate = 0;
      if (prev && prev.byName[k.name] !== undefined && t > prev.t) {
        rate = Math.max(0, (k.processed - prev.byName[k.name]) * 1000 / (t - prev.t));
      }
      state.rates[k.name] = rate;
      const h = state.history[k.name] || (state.history[k.name] = []);
      if (prev) h.push({ t, rate, p99: k.latency.p99_ns });
      while (h.length && h[0].t < t - HISTORY_MS) h.shift();
    }
    const byName = {};
    for (const k of snap.kernels) byName[k.name] = k.processed;
    for (const name of Object.keys(state.history)) if (byName[name] === undefined) delete state.history[name];
    state.prev = { t, byName };
    state.kernels = snap.kernels;
    if (!state.selected || byName[state.selected] === undefined) {
      const busiest = snap.kernels.slice().sort((a, b) => b.processed - a.processed)[0];
      state.selected = busiest ? busiest.name : null;
    }
    renderKernels();
  }

  function sortValue(k, key) {
    switch (key) {
      case "rate": return state.rates[k.name] || 0;
      case "fill": return k.capacity ? k.depth / k.capacity : 0;
      case "p50": return k.latency.p50_ns;
      case "p90": return k.latency.p90_ns;
      case "p99": return k.latency.p99_ns;
      default: return k[key];
    }
  }

  function visibleKernels() {
    const words = state.filter.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = state.kernels.filter((k) => {
      const hay = (k.name + " " + k.kind + " " + k.placement + " " + k.state).toLowerCase();
      return words.every((w) => hay.includes(w));
    });
    const key = state.sortKey, dir = state.sortDir;
    rows.sort((a, b) => {
      const x = sortValue(a, key), y = sortValue(b, key);
      if (x < y) return -dir;
      if (x > y) return dir;
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    });
    return rows;
  }

  function renderKernels() {
    const rows = visibleKernels();
    $("#kernel-count").textContent = rows.length === state.kernels.length
      ? "(" + rows.length + ")" : "(" + rows.length + " of " + state.kernels.length + ")";
    const tbody = $("#kernels tbody");
    const frag = document.createDocumentFragment();
    for (const k of rows) {
      const fill = k.capacity ? k.depth / k.capacity : 0;
      const bar = el("span", { class: fillClass(fill) });
      bar.style.width = Math.min(100, fill * 100).toFixed(1) + "%"; // CSSOM, allowed by the CSP
      const tr = el("tr", { "data-name": k.name, class: k.name === state.selected ? "selected" : "" },
        el("td", { class: "name", text: k.name }),
        el("td", { text: k.kind }),
        el("td", { text: k.placement }),
        el("td", { class: "state-" + k.state, text: k.state }),
        el("td", { class: "num processed", "data-value": String(k.processed), text: String(k.processed) }),
        el("td", { class: "num errors" + (k.errors ? " bad" : ""), "data-value": String(k.errors), text: String(k.errors) }),
        el("td", { class: "num dropped" + (k.dropped ? " bad" : ""), "data-value": String(k.dropped), text: String(k.dropped) }),
        el("td", {}, el("span", { class: "bar" }, bar), el("span", { class: "bar-label", text: k.depth + " / " + k.capacity })),
        el("td", { class: "num", text: fmtNum(state.rates[k.name] || 0) }),
        el("td", { class: "num", text: fmtNs(k.latency.p50_ns) }),
        el("td", { class: "num", text: fmtNs(k.latency.p90_ns) }),
        el("td", { class: "num", text: fmtNs(k.latency.p99_ns) }));
      frag.append(tr);
    }
    if (!rows.length) frag.append(el("tr", {}, el("td", { class: "empty", colspan: "12", text: "no kernels" })));
    tbody.replaceChildren(frag);
    for (const th of document.querySelectorAll("#kernels th")) {
      th.classList.toggle("sorted-asc", th.dataset.key === state.sortKey && state.sortDir > 0);
      th.classList.toggle("sorted-desc", th.dataset.key === state.sortKey && state.sortDir < 0);
    }
    renderHistory();
  }

  // --- one kernel: histogram and history ----------------------------
  async function pollHistogram() {
    const name = state.selected;
    $("#kernel-detail").hidden = !name;
    if (!name) return;
    $("#detail-name").textContent = name;
    const h = await getJSON("api/histogram?kernel=" + encodeURIComponent(name));
    if (h.kernel === state.selected) drawHistogram(h);
  }

  function drawHistogram(h) {
    const s = $("#histogram");
    const W = 560, H = 220, L = 44, R = 10, T = 10, B = 28;
    const parts = [];
    $("#hist-summary").textContent = h.count
      ? "· " + fmtNum(h.count) + " messages · p50 " + fmtNs(h.summary.p50_ns) + " · p99 " + fmtNs(h.summary.p99_ns) : "";
    if (!h.buckets.length) {
      parts.push(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty-note" }, "no timed messages yet"));
      s.replaceChildren(...parts);
      return;
    }
    const lo = Math.max(1, h.buckets[0].lo_ns || h.bounds.min_ns / 2);
    const last = h.buckets[h.buckets.length - 1];
    const hi = last.hi_ns || last.lo_ns * 1.25;
    const lx0 = Math.log10(lo) - 0.15, lx1 = Math.log10(hi) + 0.15;
    const x = (ns) => L + (Math.log10(Math.max(ns, 1)) - lx0) / (lx1 - lx0) * (W - L - R);
    const maxC = Math.max(...h.buckets.map((b) => b.count));
    const y = (c) => H - B - c / maxC * (H - T - B);
    parts.push(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }));
    parts.push(svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }));
    for (let e = Math.ceil(lx0); e <= Math.floor(lx1); e++) {
      const px = x(Math.pow(10, e));
      parts.push(svg("line", { x1: px, y1: H - B, x2: px, y2: H - B + 4, class: "axis" }));
      parts.push(svg("text", { x: px, y: H - B + 15, "text-anchor": "middle" }, fmtNs(Math.pow(10, e))));
    }
    parts.push(svg("text", { x: L - 4, y: T + 8, "text-anchor": "end" }, fmtNum(maxC)));
    parts.push(svg("text", { x: L - 4, y: H - B, "text-anchor": "end" }, "0"));
    for (const b of h.buckets) {
      const x0 = x(b.lo_ns || lo), x1 = x(b.hi_ns || b.lo_ns * 1.25);
      const r = svg("rect", { class: "bar-rect", x: x0.toFixed(2), y: y(b.count).toFixed(2),
        width: Math.max(1, x1 - x0 - 0.5).toFixed(2), height: (H - B - y(b.count)).toFixed(2) });
      r.append(svg("title", {}, "[" + fmtNs(b.lo_ns) + ", " + (b.hi_ns ? fmtNs(b.hi_ns) : "∞") + "): " + b.count));
      parts.push(r);
    }
    for (const [q, ns, color] of [["p50", h.summary.p50_ns, "#2f9e5b"], ["p90", h.summary.p90_ns, "#d79a1e"], ["p99", h.summary.p99_ns, "#c2410c"]]) {
      if (!ns) continue;
      parts.push(svg("line", { x1: x(ns), y1: T, x2: x(ns), y2: H - B, stroke: color, class: "q-line" }));
      parts.push(svg("text", { x: x(ns) + 2, y: T + 8 + (q === "p90" ? 10 : q === "p99" ? 20 : 0), fill: color }, q));
    }
    s.replaceChildren(...parts);
  }

  function renderHistory() {
    const s = $("#history");
    const h = state.history[state.selected] || [];
    const W = 560, H = 220, L = 48, R = 52, T = 10, B = 28;
    const parts = [svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }),
      svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }),
      svg("line", { x1: W - R, y1: T, x2: W - R, y2: H - B, class: "axis" })];
    if (h.length < 2) {
      parts.push(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, "collecting…"));
      s.replaceChildren(...parts);
      return;
    }
    const t1 = h[h.length - 1].t, t0 = Math.min(h[0].t, t1 - 60000);
    const maxRate = Math.max(1, ...h.map((p) => p.rate)), maxP99 = Math.max(1, ...h.map((p) => p.p99));
    const x = (t) => L + (t - t0) / (t1 - t0) * (W - L - R);
    const yr = (v) => H - B - v / maxRate * (H - T - B), yp = (v) => H - B - v / maxP99 * (H - T - B);
    // one path per series, broken where polls were missed (the page was
    // hidden, the member unreachable)
    const line = (y) => h.map((p, i) => (i === 0 || p.t - h[i - 1].t > 3 * POLL_MS ? "M" : "L") +
      x(p.t).toFixed(1) + "," + y(p).toFixed(1)).join(" ");
    parts.push(svg("path", { class: "rate", d: line((p) => yr(p.rate)), "data-points": h.length }));
    parts.push(svg("path", { class: "p99", d: line((p) => yp(p.p99)), "data-points": h.length }));
    parts.push(svg("text", { x: L - 4, y: T + 8, "text-anchor": "end", class: "legend-rate" }, fmtNum(maxRate) + "/s"));
    parts.push(svg("text", { x: W - R + 4, y: T + 8 }, fmtNs(maxP99)));
    parts.push(svg("text", { x: L - 4, y: H - B, "text-anchor": "end" }, "0"));
    parts.push(svg("text", { x: L, y: H - B + 15 }, "−" + Math.round((t1 - t0) / 1000) + " s"));
    parts.push(svg("text", { x: W - R, y: H - B + 15, "text-anchor": "end" }, "now"));
    s.replaceChildren(...parts);
  }

  // --- stream graphs -------------------------------------------------
  async function pollGraphs() {
    const r = await getJSON("api/graphs");
    const box = $("#graphs");
    $("#graph-count").textContent = "(" + r.graphs.length + ")";
    if (!r.graphs.length) {
      box.replaceChildren(el("p", { class: "empty", text: "no stream graph running" }));
      return;
    }
    box.replaceChildren(...r.graphs.map(drawGraph));
  }

  function drawGraph(g) {
    // layers: the longest path from a source
    const layer = {}, preds = {};
    for (const n of g.nodes) { layer[n.name] = 0; preds[n.name] = []; }
    for (const e of g.edges) preds[e.to].push(e.from);
    for (let changed = true, i = 0; changed && i < g.nodes.length; i++) {
      changed = false;
      for (const e of g.edges) if (layer[e.to] < layer[e.from] + 1) { layer[e.to] = layer[e.from] + 1; changed = true; }
    }
    const rows = {}, pos = {};
    const NW = 190, NH = 86, GX = 96, GY = 18, P = 16;
    for (const n of g.nodes) {
      const l = layer[n.name];
      rows[l] = (rows[l] || 0) + 1;
      pos[n.name] = { x: P + l * (NW + GX), y: P + (rows[l] - 1) * (NH + GY) };
    }
    const W = P * 2 + (Math.max(...Object.values(layer)) + 1) * (NW + GX) - GX;
    const H = P * 2 + Math.max(...Object.values(rows)) * (NH + GY) - GY;
    const s = svg("svg", { class: "graph", viewBox: "0 0 " + W + " " + H, "data-graph": g.id, role: "img", "aria-label": "stream graph " + g.id });
    s.setAttribute("width", W);
    const stats = {};
    for (const st of g.stages) {
      const a = stats[st.Stage] || (stats[st.Stage] = { in: 0, out: 0, done: 0, failed: 0, late: 0, depth: 0, lag: 0 });
      a.in += st.In; a.out += st.Out; a.done += st.Done; a.failed += st.Failed; a.late += st.Late; a.depth += st.Depth;
      a.lag = Math.max(a.lag, st.WatermarkLag);
    }
    g.edges.forEach((e, i) => {
      const a = pos[e.from], b = pos[e.to];
      const x1 = a.x + NW, y1 = a.y + NH / 2, x2 = b.x, y2 = b.y + NH / 2, mx = (x1 + x2) / 2;
      const f = g.fill[i] || 0;
      const p = svg("path", { class: "edge", d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, stroke: fillColor(f), "data-fill": f.toFixed(3) });
      // f counts the overflow too (up to 2): past 1 the ring is full and
      // its overflow holds the rest
      const label = f > 1 ? "full +" + Math.round((f - 1) * 100) + "% ovf" : Math.round(f * 100) + "%";
      p.append(svg("title", {}, e.from + " → " + e.to + ": downstream rings " + label));
      s.append(p);
      s.append(svg("text", { x: mx, y: (y1 + y2) / 2 - 5, "text-anchor": "middle" }, label));
    });
    for (const n of g.nodes) {
      const p = pos[n.name], a = stats[n.name] || {};
      const gN = svg("g", { class: "node " + n.kind, transform: `translate(${p.x},${p.y})`, "data-node": n.name });
      gN.append(svg("rect", { width: NW, height: NH, rx: 6 }));
      gN.append(svg("text", { x: 8, y: 16, class: "title" }, n.name));
      gN.append(svg("text", { x: NW - 8, y: 16, "text-anchor": "end" }, n.kind + (n.chained ? " · chained" : " ×" + n.parallelism)));
      const lines = n.kind === "source"
        ? ["sent " + fmtNum(a.out)]
        : ["in " + fmtNum(a.in) + " · out " + fmtNum(a.out) + (a.failed ? " · failed " + fmtNum(a.failed) : ""),
          "queued " + a.depth + " pkts of " + n.parallelism + "×" + g.capacity,
          "wm lag " + (a.lag ? fmtNs(a.lag * 1e6) : "–") + " · late " + fmtNum(a.late)];
      lines.forEach((t, i) => gN.append(svg("text", { x: 8, y: 36 + i * 15 }, t)));
      s.append(gN);
    }
    return el("div", { class: "graph-box" }, el("h3", { text: g.id + " · " + g.phase + " · batch " + g.batch }), s);
  }

  // --- cluster -------------------------------------------------------
  async function pollCluster() {
    const c = await getJSON("api/cluster");
    const box = $("#cluster");
    if (!c.member) {
      $("#member").textContent = "";
      box.replaceChildren(el("p", { class: "empty", text: "not a cluster member" }));
      return;
    }
    $("#member").textContent = c.name + " · " + c.address + " · " + c.state;
    const mt = el("table", { id: "members" }, el("thead", {}, el("tr", {},
      ...["Member", "State", "Kinds", "Devices", "Identities"].map((h) => el("th", { text: h })))));
    const tb = el("tbody");
    for (const m of c.members) {
      const ids = m.identities ? Object.entries(m.identities).map(([k, v]) => k + ": " + v.length).join(", ") : (m.self ? "none" : "on its own dashboard");
      tb.append(el("tr", {}, el("td", { text: m.address + (m.self ? " (this member)" : "") }),
        el("td", { class: m.state === "ready" ? "state-active" : m.state === "lost" ? "bad" : "", text: m.state }),
        el("td", { text: (m.kinds || []).join(", ") }),
        el("td", { text: (m.devices || []).join(", ") || "–" }),
        el("td", { text: ids })));
    }
    mt.append(tb);
    const parts = [mt];
    const self = c.members.find((m) => m.self);
    if (self && self.identities) {
      for (const [kind, ids] of Object.entries(self.identities)) {
        parts.push(el("h3", { text: "Identities of kind " + kind + " here (" + ids.length + ")" }),
          el("div", { class: "kernel-list", text: ids.join(", ") }));
      }
    }
    parts.push(el("h3", { text: "Recent placement moves" }));
    if (!c.moves.length) parts.push(el("p", { class: "empty", text: "none yet" }));
    else {
      const ml = el("table", { id: "moves" });
      for (const mv of c.moves.slice(-12).reverse()) {
        ml.append(el("tr", {}, el("td", { class: "muted", text: new Date(mv.time).toLocaleTimeString() }),
          el("td", { text: mv.kind + "/" + mv.identity }),
          el("td", { text: mv.event + (mv.to ? " → " + mv.to : "") + (mv.state ? " (with state)" : "") })));
      }
      parts.push(ml);
    }
    box.replaceChildren(...parts);
  }

  // --- devices -------------------------------------------------------
  async function pollDevices() {
    const r = await getJSON("api/devices");
    const cards = r.devices.map((d) => {
      const dl = el("dl");
      const row = (k, v, cls) => dl.append(el("dt", { text: k }), el("dd", { class: cls || "", text: v }));
      row("kind", d.kind);
      row("state", d.available ? "available" : "unavailable: " + d.reason, d.available ? "state-active" : "bad");
      row("kernels", String(d.kernels.length));
      row("processed", fmtNum(d.processed));
      row("faults", d.errors + " errors · " + d.restarts + " restarts · " + d.dropped + " dropped", d.errors || d.restarts ? "bad" : "");
      if (d.epochs) {
        row("device epochs", d.epochs.count + " · last " + fmtNs(d.epochs.last_ns) + " · max " + fmtNs(d.epochs.max_ns) +
          (d.epochs.last_reason ? " (" + d.epochs.last_reason + ")" : ""));
      }
      return el("div", { class: "card", "data-device": d.name }, el("h3", { text: d.name }), dl,
        el("div", { class: "kernel-list", text: d.kernels.join(", ") }));
    });
    $("#devices").replaceChildren(...(cards.length ? cards : [el("p", { class: "empty", text: "no devices" })]));
  }

  // --- loop ----------------------------------------------------------
  function loop(fn, every) {
    let running = false;
    const tick = async () => {
      if (running) return;
      running = true;
      try {
        await fn();
        if (!state.ok) { state.ok = true; }
        setStatus(true, "live · " + new Date().toLocaleTimeString());
      } catch (e) {
        state.ok = false;
        setStatus(false, "disconnected: " + e.message);
      } finally {
        running = false;
      }
    };
    tick();
    setInterval(tick, every);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#kernel-filter").addEventListener("input", (e) => { state.filter = e.target.value; renderKernels(); });
    for (const th of document.querySelectorAll("#kernels th")) {
      th.addEventListener("click", () => {
        if (state.sortKey === th.dataset.key) state.sortDir = -state.sortDir;
        else { state.sortKey = th.dataset.key; state.sortDir = ["name", "kind", "placement", "state"].includes(th.dataset.key) ? 1 : -1; }
        renderKernels();
      });
    }
    $("#kernels tbody").addEventListener("click", (e) => {
      const tr = e.target.closest("tr[data-name]");
      if (!tr) return;
      state.selected = tr.dataset.name;
      renderKernels();
      pollHistogram().catch(() => {});
    });
    loop(pollKernels, POLL_MS);
    loop(pollHistogram, POLL_MS);
    loop(pollGraphs, POLL_MS);
    loop(pollCluster, POLL_MS * 2);
    loop(pollDevices, POLL_MS * 2);
  });
})();
