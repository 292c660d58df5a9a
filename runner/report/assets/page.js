/* The results page's renderers (runner/report/web.py inlines this file into index.html).
 * Plain JavaScript drawing SVG: no library, no request. Reads the page's JSON data
 * (<script id="sweep-data">) and draws, per sweep: the best point, parallel coordinates whose
 * axes can be brushed (drag along an axis; a click on it clears its range) with the table
 * following, a sortable table of every point, the importance bars and the best so far; then
 * each registered section (SweepPage.section) whose key the sweep's data has. */
"use strict";

(function () {
  const NS = "http://www.w3.org/2000/svg";
  const VIRIDIS = ["#fde725", "#5ec962", "#21918c", "#3b528b", "#440154"];
  const TOP = 28, HEIGHT = 300, ABSENT = -0.12, LEFT = 48, RIGHT = 90;
  const registered = [];

  /** Extension point: render(element, sweep, data) draws sweep[key] into element; the
   * sections' scripts draw with the page's own helpers (el, svg, number). */
  window.SweepPage = {
    section(key, title, render) {
      registered.push({ key, title, render });
    },
    el: (...args) => el(...args),
    svg: (...args) => svg(...args),
    number: (v) => number(v),
  };

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function number(v) {
    if (typeof v !== "number") return v === null || v === undefined ? "" : String(v);
    return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  }

  function safeUrl(url) {
    return /^(https?|file):/i.test(url || "") ? url : null;
  }

  function colour(t) {
    const x = Math.max(0, Math.min(1, t)) * (VIRIDIS.length - 1);
    return VIRIDIS[Math.round(x)];
  }

  function finished(sweep) {
    return sweep.points.filter((p) => p.heights !== null);
  }

  // -- parallel coordinates, brushed -------------------------------------------------------

  function parallel(parent, sweep, state) {
    const axes = sweep.axes;
    const width = Math.max(640, 150 * axes.length);
    const y = (h) => TOP + (1 - h) * HEIGHT;
    const step = axes.length > 1 ? (width - LEFT - RIGHT) / (axes.length - 1) : 0;
    const x = (j) => (axes.length > 1 ? LEFT + j * step : width / 2);
    const height = y(ABSENT) + 36;
    const root = svg("svg", {
      class: "parallel", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-label": `parallel coordinates of ${sweep.name}`,
    });
    const points = finished(sweep).slice().sort((a, b) => b.rank - a.rank); // the best last
    const values = points.map((p) => p.value);
    const low = Math.min(...values), high = Math.max(...values);
    const lines = new Map();
    for (const p of points) {
      const d = p.heights.map((h, j) => `${j ? "L" : "M"}${x(j).toFixed(1)},${y(h).toFixed(1)}`);
      let t = high > low ? (p.value - low) / (high - low) : 0;
      if (sweep.goal === "maximize") t = 1 - t;
      const best = p.experiment === sweep.best;
      const line = svg("path", { class: best ? "line best" : "line", d: d.join(""), "data-key": p.key });
      if (!best) line.setAttribute("stroke", colour(t));
      line.appendChild(svg("title", {}, `${p.experiment}: ${sweep.metric} = ${number(p.value)}`));
      root.appendChild(line);
      lines.set(p.key, line);
    }
    axes.forEach((axis, j) => {
      const group = svg("g", { class: "axis-group", "data-axis": axis.name });
      group.appendChild(svg("line", { class: "axis", x1: x(j), x2: x(j), y1: y(1), y2: y(0) }));
      for (const [h, text] of axis.ticks) {
        group.appendChild(svg("text", { x: x(j) + 5, y: y(h) + 4 }, text));
      }
      group.appendChild(svg("text", { class: "axis-name", x: x(j), y: height - 8 }, axis.name));
      const brush = svg("rect", { class: "brush", x: x(j) - 9, width: 18, y: 0, height: 0, visibility: "hidden" });
      const area = svg("rect", {
        class: "brush-area", "data-axis": axis.name, x: x(j) - 12, width: 24,
        y: y(1) - 6, height: y(ABSENT) - y(1) + 12,
      });
      group.append(brush, area);
      brushable(root, area, brush, (range) => {
        if (range === null) delete state.brushes[j];
        else state.brushes[j] = range.map((v) => 1 - (v - TOP) / HEIGHT).sort((a, b) => a - b);
        state.update();
      });
      root.appendChild(group);
    });
    parent.appendChild(root);
    return (visible) => {
      for (const [key, line] of lines) line.classList.toggle("dim", !visible.has(key));
    };
  }

  function brushable(root, area, brush, done) {
    const at = (event) => {
      const box = root.getBoundingClientRect();
      return ((event.clientY - box.top) * root.viewBox.baseVal.height) / box.height;
    };
    area.addEventListener("mousedown", (event) => {
      event.preventDefault();
      const start = at(event);
      let end = start;
      const draw = () => {
        brush.setAttribute("y", Math.min(start, end));
        brush.setAttribute("height", Math.abs(end - start));
        brush.setAttribute("visibility", "visible");
      };
      const move = (e) => { end = at(e); draw(); };
      const up = (e) => {
        end = at(e);
        window.removeEventListener("mousemove", move);
        window.removeEventListener("mouseup", up);
        if (Math.abs(end - start) < 3) {
          brush.setAttribute("visibility", "hidden");
          done(null);
        } else {
          draw();
          done([start, end]);
        }
      };
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", up);
    });
  }

  // -- the table -------------------------------------------------------------------------------

  function columns(sweep) {
    const out = [
      { name: "#", get: (p) => p.rank, numeric: true },
      { name: "experiment", get: (p) => p.experiment, link: true },
      { name: "state", get: (p) => p.state },
      { name: sweep.metric || "metric", get: (p) => p.value, numeric: true },
    ];
    for (const name of sweep.params) {
      out.push({ name, get: (p) => (name in p.params ? p.params[name] : null), numeric: null });
    }
    return out;
  }

  function compare(a, b) {
    if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;
    if (b === null || b === undefined) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  function table(parent, sweep, state) {
    const cols = columns(sweep);
    const wrap = el("div", { class: "table-wrap" });
    const tbl = el("table", { class: "points" });
    const head = el("tr");
    cols.forEach((c, i) => {
      const th = el("th", { scope: "col", "data-column": c.name }, c.name);
      th.addEventListener("click", () => {
        state.sort = { column: i, direction: state.sort.column === i ? -state.sort.direction : 1 };
        state.update();
      });
      head.appendChild(th);
    });
    const thead = el("thead");
    thead.appendChild(head);
    const body = el("tbody");
    tbl.append(thead, body);
    wrap.appendChild(tbl);
    parent.appendChild(wrap);
    return (rows) => {
      const { column, direction } = state.sort;
      const sorted = rows.slice().sort((a, b) => {
        const order = compare(cols[column].get(a), cols[column].get(b));
        return (order || compare(a.rank, b.rank)) * (order ? direction : 1);
      });
      head.querySelectorAll("th").forEach((th, i) => {
        if (i === column) th.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
        else th.removeAttribute("aria-sort");
      });
      body.replaceChildren(...sorted.map((p) => row(cols, p, sweep)));
    };
  }

  function row(cols, p, sweep) {
    const tr = el("tr", { "data-key": p.key, class: p.experiment === sweep.best ? "best" : "" });
    for (const c of cols) {
      const value = c.get(p);
      const td = el("td", typeof value === "number" ? { class: "number" } : {});
      const url = c.link ? safeUrl(p.url) : null;
      if (url) td.appendChild(el("a", { href: url, target: "_blank", rel: "noopener" }, String(value)));
      else td.textContent = number(value);
      tr.appendChild(td);
    }
    return tr;
  }

  // -- importance and the best so far ----------------------------------------------------------

  function importance(parent, sweep) {
    const imp = sweep.importance;
    parent.appendChild(el("h3", {}, "Parameter importance"));
    if (!imp.parameters.some((s) => s.share !== null)) {
      parent.appendChild(el("p", { class: "muted" }, `Not judged: ${imp.note}.`));
      if (!imp.parameters.length) return;
    }
    const bars = el("div", { class: "bars importance" });
    for (const s of imp.parameters) {
      bars.appendChild(el("code", {}, s.name));
      const bar = el("div", { class: s.share === null ? "bar none" : "bar", "data-parameter": s.name });
      bar.style.width = `${(s.share || 0) * 100}%`;
      bars.appendChild(bar);
      const among = `${s.points} point(s)${s.condition ? `, ${s.condition}` : ""}`;
      const text = s.share === null ? `${s.note} (${among})` : `${s.share.toFixed(3)} (${among}; ${s.method})`;
      bars.appendChild(el("span", { class: "muted" }, text));
    }
    parent.appendChild(bars);
    parent.appendChild(el("p", { class: "muted" }, `Method: ${imp.method}; a conditional parameter is judged among the points where it exists.`));
  }

  function progress(parent, sweep) {
    const steps = sweep.progress;
    parent.appendChild(el("h3", {}, `Best ${sweep.metric} so far`));
    if (!steps.length) {
      parent.appendChild(el("p", { class: "muted" }, "No point has finished yet."));
      return;
    }
    const width = 640, height = 260, left = 60, right = 20, top = 14, bottom = 36;
    const xs = steps.map((s) => s.x), ys = steps.flatMap((s) => [s.value, s.best]);
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    const sx = (v) => left + ((v - x0) / (x1 - x0 || 1)) * (width - left - right);
    const sy = (v) => top + (1 - (v - y0) / (y1 - y0 || 1)) * (height - top - bottom);
    const root = svg("svg", { class: "progress", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    root.appendChild(svg("line", { class: "axis", x1: left, x2: left, y1: top, y2: height - bottom }));
    root.appendChild(svg("line", { class: "axis", x1: left, x2: width - right, y1: height - bottom, y2: height - bottom }));
    for (const v of [y0, y1]) root.appendChild(svg("text", { x: 4, y: sy(v) + 4 }, number(v)));
    const ticks = [...new Set([x0, Math.round((x0 + x1) / 2), x1])];
    for (const v of ticks) root.appendChild(svg("text", { x: sx(v) - 4, y: height - bottom + 16 }, String(v)));
    root.appendChild(svg("text", { x: width / 2, y: height - 4, class: "axis-name" }, sweep.by_round ? "round" : "point, in the sweep's order"));
    for (const s of steps) root.appendChild(svg("circle", { class: "dot", cx: sx(s.x), cy: sy(s.value), r: 3 }));
    const d = steps.map((s, i) => (i ? `H${sx(s.x).toFixed(1)}V${sy(s.best).toFixed(1)}` : `M${sx(s.x).toFixed(1)},${sy(s.best).toFixed(1)}`));
    root.appendChild(svg("path", { class: "step", d: d.join("") }));
    parent.appendChild(root);
  }

  // -- a sweep ----------------------------------------------------------------------------------

  function sweepSection(main, sweep) {
    const section = el("section", { class: "sweep", "data-sweep": sweep.name });
    const title = el("h2", {}, "Results: ");
    title.append(el("code", {}, sweep.name), ` — ${sweep.path}`);
    section.appendChild(title);
    const done = finished(sweep);
    const metric = sweep.metric ? `Metric ${sweep.metric} (${sweep.goal}). ` : "No numeric metric yet. ";
    section.appendChild(el("p", {}, `${metric}${sweep.points.length} point(s); ${done.length} finished.`));
    const best = sweep.points.find((p) => p.experiment === sweep.best);
    if (best) {
      const line = el("p", { class: "best-line" }, `Best: ${best.experiment}: ${sweep.metric} = ${number(best.value)} at `);
      line.appendChild(el("code", {}, Object.entries(best.params).map(([k, v]) => `${k}=${v}`).join(" ")));
      const url = safeUrl(best.url);
      if (url) line.append(" ", el("a", { href: url, target: "_blank", rel: "noopener" }, "open"));
      section.appendChild(line);
    }
    const state = { brushes: {}, sort: { column: 0, direction: 1 }, update: () => {} };
    let lines = () => {};
    if (done.length && sweep.axes.length > 1) {
      section.appendChild(el("h3", {}, "Parallel coordinates"));
      section.appendChild(el("p", { class: "muted" }, "Drag along an axis to keep the points in that range; click the axis to clear it. Red: the best point."));
      lines = parallel(section, sweep, state);
    }
    const filter = el("p", { class: "filter" });
    section.appendChild(el("h3", {}, "Points"));
    section.appendChild(filter);
    const rows = table(section, sweep, state);
    state.update = () => {
      const ranges = Object.entries(state.brushes);
      const inside = (p) => ranges.every(([j, [lo, hi]]) => p.heights[j] >= lo && p.heights[j] <= hi);
      const shown = ranges.length ? done.filter(inside) : sweep.points;
      lines(new Set((ranges.length ? shown : done).map((p) => p.key)));
      rows(shown);
      filter.textContent = ranges.length
        ? `${shown.length} of ${done.length} finished point(s) in the brushed range(s).`
        : `${sweep.points.length} point(s), ${done.length} finished.`;
    };
    state.update();
    importance(section, sweep);
    progress(section, sweep);
    for (const extra of registered) {
      if (sweep[extra.key] === undefined) continue;
      const part = el("section", { class: "extra", "data-section": extra.key });
      part.appendChild(el("h3", {}, extra.title));
      extra.render(part, sweep, sweep[extra.key]);
      section.appendChild(part);
    }
    main.appendChild(section);
  }

  window.addEventListener("DOMContentLoaded", () => {
    const data = JSON.parse(document.getElementById("sweep-data").textContent);
    const main = document.getElementById("sweeps");
    if (!data.sweeps.length) main.appendChild(el("p", {}, "No sweep."));
    for (const sweep of data.sweeps) sweepSection(main, sweep);
    document.body.setAttribute("data-ready", "true");
  });
})();
