// fabricsim design-review report: draws the data fabricsim embedded in this page (the
// <script id="fabricsim-data"> element) with ECharts, which is embedded too. Every figure
// is a <div class="figure" data-figure="..."> and every table has data-table="...", so a
// test can check that they are present; window.fabricsimReport lists what was drawn.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("fabricsim-data").textContent);
  const root = document.getElementById("report");
  const drawn = { figures: [], tables: [] };
  const palette = ["#2f6fb0", "#d9822b", "#3f9c4f", "#b23b3b", "#7b5ea7", "#8c6d31", "#c2549d", "#4b8f8c"];

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function add(parent, tag, attrs, text) { const e = el(tag, attrs, text); parent.appendChild(e); return e; }
  function fmtBytes(b) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0, v = b;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (Number.isInteger(v) ? v : v.toFixed(1)) + " " + u[i];
  }
  function table(parent, name, head, rows) {
    const t = add(parent, "table", { "data-table": name });
    const tr = add(add(t, "thead"), "tr");
    head.forEach((h, i) => add(tr, "th", { class: i === 0 ? "l" : "" }, h));
    const tb = add(t, "tbody");
    rows.forEach(r => {
      const row = add(tb, "tr");
      r.forEach((c, i) => add(row, "td", { class: i === 0 || typeof c === "string" && isNaN(+c) ? "l" : "" },
                               c === null || c === undefined ? "-" : String(c)));
    });
    drawn.tables.push(name);
    return t;
  }
  function figure(parent, name, option, tall) {
    const d = add(parent, "div", { class: "figure" + (tall ? " tall" : ""), "data-figure": name });
    const chart = echarts.init(d, null, { renderer: "svg" });
    chart.setOption(Object.assign({ animation: false, color: palette }, option));
    drawn.figures.push(name);
    return chart;
  }

  add(root, "h1", {}, data.title);
  add(root, "p", { class: "note" }, data.systems.length + " system(s): " +
      data.systems.map(s => s.label + " (" + s.file + ")").join(", ") +
      ". busbw and algbw in GB/s (1e9 B/s) per direction; time in microseconds.");

  // Side by side: one table of every system's headline figures, and busbw per size.
  const sweeps = data.systems.filter(s => s.rows.length && s.rows[0].size_bytes !== undefined);
  if (data.systems.length > 1) {
    add(root, "h2", {}, "Systems side by side");
    table(root, "systems", ["system", "config name", "collective", "algorithm", "devices", "links",
                            "ceiling busbw", "largest size", "busbw there"],
      data.systems.map(s => {
        const last = s.rows[s.rows.length - 1] || {};
        const nd = Object.values(s.counts.devices).reduce((a, b) => a + b, 0);
        const nl = Object.values(s.counts.links).reduce((a, b) => a + b, 0);
        return [s.label, s.name, s.collective, s.algorithm, nd, nl,
                s.ceiling && s.ceiling.busbw_GBps ? s.ceiling.busbw_GBps.toFixed(2) : null,
                last.size_bytes !== undefined ? fmtBytes(last.size_bytes) : null,
                last.busbw_GBps !== undefined ? last.busbw_GBps.toFixed(2) : null];
      }));
    if (sweeps.length > 1) {
      const sizes = [...new Set(sweeps.flatMap(s => s.rows.map(r => r.size_bytes)))].sort((a, b) => a - b);
      table(root, "busbw_side_by_side", ["size"].concat(sweeps.map(s => s.label + " busbw")),
        sizes.map(b => [fmtBytes(b)].concat(sweeps.map(s => {
          const r = s.rows.find(x => x.size_bytes === b);
          return r ? r.busbw_GBps.toFixed(2) : null;
        }))));
    }
  }

  // busbw and time against size, every system, with each one's ceiling.
  if (sweeps.length) {
    add(root, "h2", {}, "Bandwidth and time against message size");
    add(root, "p", { class: "note" }, "Dashed: each system's analytic busbw ceiling (the busiest link or host path). " +
        "Diamonds: published measurements the config names (its `published:` section).");
    const series = [];
    sweeps.forEach((s, i) => {
      const color = palette[i % palette.length];
      series.push({ name: s.label, type: "line", symbolSize: 6, itemStyle: { color: color }, lineStyle: { color: color },
                    data: s.rows.map(r => [r.size_bytes, r.busbw_GBps]) });
      (s.published || []).forEach((c, ci) => {
        const pts = c.points.filter(p => p.busbw_GBps !== undefined).map(p => [p.size_bytes, p.busbw_GBps]);
        if (pts.length)
          series.push({ name: s.label + " published [" + (ci + 1) + "]", type: "scatter", symbol: "diamond", symbolSize: 11,
                        itemStyle: { color: color, borderColor: "#000" }, data: pts });
      });
      if (s.ceiling && s.ceiling.busbw_GBps)
        series.push({ name: s.label + " ceiling", type: "line", symbol: "none",
                      lineStyle: { type: "dashed", color: color }, itemStyle: { color: color },
                      data: [[s.rows[0].size_bytes, s.ceiling.busbw_GBps],
                             [s.rows[s.rows.length - 1].size_bytes, s.ceiling.busbw_GBps]] });
    });
    const logx = { type: "log", logBase: 2, name: "size (B)", nameLocation: "middle", nameGap: 28,
                   axisLabel: { formatter: v => fmtBytes(v) } };
    figure(root, "busbw", { tooltip: { trigger: "axis" }, legend: { top: 0 }, grid: { top: 60, left: 60, right: 30 },
                            xAxis: logx, yAxis: { type: "value", name: "busbw (GB/s)" }, series: series });
    figure(root, "time", { tooltip: { trigger: "axis" }, legend: { top: 0 }, grid: { top: 60, left: 70, right: 30 },
                           xAxis: logx, yAxis: { type: "log", name: "time (us)" },
                           series: [].concat(...sweeps.map((s, i) => [{ name: s.label, type: "line", symbolSize: 6,
                                                      itemStyle: { color: palette[i % palette.length] },
                                                      data: s.rows.map(r => [r.size_bytes, r.time_us]) }].concat(
                             (s.published || []).map((c, ci) => ({ name: s.label + " published [" + (ci + 1) + "]", type: "scatter",
                                 symbol: "diamond", symbolSize: 11, itemStyle: { color: palette[i % palette.length], borderColor: "#000" },
                                 data: c.points.filter(p => p.time_us !== undefined).map(p => [p.size_bytes, p.time_us]) }))
                               .filter(x => x.data.length)))) });
  }

  data.systems.forEach((s, si) => {
    add(root, "h2", {}, "System " + s.label + ": " + s.name);
    add(root, "p", { class: "note" }, "From " + s.file + " (results schema " + s.schema_version + ")" +
        (s.collective ? "; workload " + s.algorithm + " " + s.collective : "") + ".");
    const counts = [];
    for (const what of ["devices", "ports", "links"])
      for (const k in s.counts[what]) counts.push([what, k, s.counts[what][k]]);
    table(root, "counts_" + si, ["what", "kind or link type", "count"], counts);

    // The topology: devices in layers (endpoints at the bottom, then by hops from them).
    const nodes = s.topology.nodes, edges = s.topology.edges;
    const adj = {};
    nodes.forEach(n => { adj[n.name] = []; });
    edges.forEach(e => { adj[e.a].push(e.b); adj[e.b].push(e.a); });
    const layer = {};
    let frontier = nodes.filter(n => n.kind === "endpoint").map(n => n.name);
    if (!frontier.length && nodes.length) frontier = [nodes[0].name];
    frontier.forEach(n => { layer[n] = 0; });
    while (frontier.length) {
      const next = [];
      frontier.forEach(n => adj[n].forEach(m => { if (layer[m] === undefined) { layer[m] = layer[n] + 1; next.push(m); } }));
      frontier = next;
    }
    const byLayer = {};
    nodes.forEach(n => { const l = layer[n.name] || 0; (byLayer[l] = byLayer[l] || []).push(n); });
    const gnodes = [];
    const kinds = [...new Set(nodes.map(n => n.kind))];
    Object.keys(byLayer).forEach(l => byLayer[l].forEach((n, i) => gnodes.push({
      name: n.name, x: (i + 0.5) / byLayer[l].length * 1000, y: 600 - l * 200, category: kinds.indexOf(n.kind),
      symbolSize: nodes.length > 200 ? 5 : 12 })));
    figure(root, "topology_" + si, {
      tooltip: {}, legend: { data: kinds, top: 0 },
      series: [{ type: "graph", layout: "none", roam: true, progressive: 0, data: gnodes,
                 categories: kinds.map(k => ({ name: k })),
                 label: { show: nodes.length <= 40, fontSize: 10, position: "bottom" },
                 lineStyle: { opacity: 0.5 },
                 links: edges.map(e => ({ source: e.a, target: e.b, value: e.count,
                                          lineStyle: { width: Math.min(6, 0.5 + e.count / 4) },
                                          tooltip: { formatter: e.a + " - " + e.b + ": " + e.count + " x " + e.link_type } })) }]
    }, true);

    if (s.rows.length && s.rows[0].size_bytes !== undefined) {
      add(root, "h3", {}, "Rows and their bottlenecks");
      table(root, "rows_" + si, ["size", "algorithm", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "bottleneck port", "its utilisation"],
        s.rows.map(r => [fmtBytes(r.size_bytes), r.algorithm, r.time_us.toFixed(2), r.algbw_GBps.toFixed(2),
                         r.busbw_GBps.toFixed(2), r.bottleneck ? r.bottleneck.port : null,
                         r.bottleneck ? r.bottleneck.utilisation.toFixed(3) : null]));
    } else if (s.rows.length) {
      add(root, "h3", {}, "Rows");
      const keys = Object.keys(s.rows[0]);
      table(root, "rows_" + si, keys, s.rows.map(r => keys.map(k => typeof r[k] === "number" && !Number.isInteger(r[k]) ? r[k].toFixed(2) : r[k])));
    }

    if (s.published && s.published.length) {
      add(root, "h3", {}, "Against published measurements");
      const rowsP = [];
      const f = v => (v === null || v === undefined) ? null : v.toFixed(2);
      const e = v => (v === null || v === undefined) ? null : (v > 0 ? "+" : "") + v.toFixed(1) + "%";
      s.published.forEach((c, ci) => c.points.forEach(p => {
        for (const [k, sk, ek, unit] of [["busbw_GBps", "simulated_busbw_GBps", "busbw_error_pct", "busbw (GB/s)"],
                                          ["time_us", "simulated_time_us", "time_error_pct", "time (us)"]]) {
          if (p[k] === undefined) continue;
          const within = p[sk] === null || c.tolerance_pct === null ? null :
              (p.within_tolerance ? "within " : "OUTSIDE ") + c.tolerance_pct + "%";
          rowsP.push([String(ci + 1), fmtBytes(p.size_bytes), c.algorithm || "any", unit, f(p[k]), f(p[sk]), e(p[ek]), within]);
        }
      }));
      table(root, "published_" + si, ["curve", "size", "algorithm", "quantity", "published", "simulated", "error", "tolerance"], rowsP);
      const src = add(root, "ol", { class: "note" });
      s.published.forEach(c => add(src, "li", {}, c.source));
    }

    if (s.heatmap.ports.length && s.heatmap.values.length) {
      add(root, "h3", {}, "Port utilisation per row (the " + s.heatmap.ports.length + " busiest ports)");
      figure(root, "heatmap_" + si, {
        tooltip: { formatter: p => s.heatmap.ports[p.value[1]] + ", row " + p.value[0] + ": " + p.value[2].toFixed(3) },
        grid: { left: 150, right: 40, top: 10, bottom: 80 },
        xAxis: { type: "category", name: "row", data: s.rows.map((r, i) => r.size_bytes !== undefined ? fmtBytes(r.size_bytes) : String(i)) },
        yAxis: { type: "category", data: s.heatmap.ports, axisLabel: { fontSize: 9 } },
        visualMap: { min: 0, max: 1, calculable: true, orient: "horizontal", left: "center", bottom: 0 },
        series: [{ type: "heatmap", progressive: 0, data: s.heatmap.values }]
      }, true);
    }

    add(root, "h3", {}, "Queues and credit stalls");
    const grid = add(root, "div", { class: "grid" });
    const q = s.queue_max_bytes.filter(v => v > 0);
    const edgesB = [0, 1024, 4096, 16384, 65536, 262144, 1048576, Infinity];
    const bins = edgesB.slice(0, -1).map((lo, i) => q.filter(v => v >= lo && v < edgesB[i + 1]).length);
    figure(grid, "queue_histogram_" + si, {
      title: { text: "ports by maximum queue depth", textStyle: { fontSize: 13 } }, tooltip: {},
      xAxis: { type: "category", data: edgesB.slice(0, -1).map((lo, i) => "<" + (isFinite(edgesB[i + 1]) ? fmtBytes(edgesB[i + 1]) : "more")) },
      yAxis: { type: "value", name: "ports" }, series: [{ type: "bar", data: bins }] });
    figure(grid, "credit_stall_" + si, {
      title: { text: "credit-stall time, busiest ports (us)", textStyle: { fontSize: 13 } }, tooltip: {},
      grid: { left: 150 }, xAxis: { type: "value" },
      yAxis: { type: "category", data: s.credit_stall_us.map(x => x[0]).reverse(), axisLabel: { fontSize: 9 } },
      series: [{ type: "bar", data: s.credit_stall_us.map(x => x[1]).reverse() }] });
    if (s.queue_percentiles.length)
      table(root, "queue_percentiles_" + si, ["port", "p50 (B)", "p90 (B)", "p99 (B)"],
            s.queue_percentiles.filter(x => x[3] > 0).slice(0, 40));

    const assumed = s.params.filter(p => p[2] !== null && p[2] !== undefined);
    if (assumed.length) {
      add(root, "h3", {}, "Assumptions (parameters the config marks as not public)");
      table(root, "assumptions_" + si, ["key", "value", "why"], assumed);
    }
    const det = add(root, "details", {});
    add(det, "summary", {}, "Resolved parameters (" + s.params.length + "): every value the run used, defaults included; " +
        s.assumptions + " marked as assumptions by the config");
    table(det, "params_" + si, ["key", "value", "assumption (why)"], s.params);
  });

  window.fabricsimReport = drawn;
  document.body.setAttribute("data-rendered", "yes");
})();
