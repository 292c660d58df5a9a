/* The results page's frame (runner/report/web.py inlines this file, then parallel.js, table.js,
 * judged.js and the sections' scripts, into index.html). Plain JavaScript drawing SVG: no
 * library, no request. Reads the page's JSON data (<script id="sweep-data">) and draws a table
 * of contents (several sweeps), then per sweep: a metric picker, a halving's rung filter, the
 * best point, parallel coordinates whose axes can be brushed with the table following, the
 * table, the importance and the best so far, and each registered section (SweepPage.section)
 * whose key the sweep's data has. A click on a row or a line opens that point's detail.
 *
 * Every figure is computed in Python (runner/report/views.py): a view, one per metric and rung,
 * holds the ranked points' keys, the best so far and the importance; the script chooses one. */
"use strict";

(function () {
  const NS = "http://www.w3.org/2000/svg";
  const VIRIDIS = ["#fde725", "#5ec962", "#21918c", "#3b528b", "#440154"];
  const ALL = "all";
  const registered = [];
  const parts = {};

  /** Extension points: a section's render(element, sweep, data, shown) draws sweep[key] into
   * element, again whenever the metric or the rung changes (shown: {metric, rung, keys}, the
   * keys of the points of the rung shown); the page's own parts (parallel.js, table.js,
   * judged.js) register with part(name, draw). */
  const page = {
    ALL,
    section(key, title, render) {
      registered.push({ key, title, render });
    },
    part(name, draw) {
      parts[name] = draw;
    },
    el, svg, number, safeUrl, colour, rungText, select,
  };
  window.SweepPage = page;

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

  function rungText(sweep, rung) {
    if (rung === ALL || rung === null || rung === undefined) return "every rung";
    return `rung ${rung} (${sweep.rungs.param}=${sweep.rungs.values[Number(rung)]})`;
  }

  // -- what a sweep shows: the chosen metric and rung, and what follows from them -------------

  function model(sweep) {
    const m = {
      sweep, metric: sweep.metric, rung: sweep.rung, brushes: {}, selected: null,
      sort: { column: 0, direction: 1 }, ranks: new Map(),
      get view() { return (sweep.views[m.metric] || {})[m.rung] || null; },
      get goal() {
        const found = sweep.metrics.find((x) => x.name === m.metric);
        return found ? found.goal : sweep.goal;
      },
      inRung: (p) => m.rung === ALL || String(p.rung) === m.rung,
      value: (p) => (typeof p.metrics[m.metric] === "number" ? p.metrics[m.metric] : null),
      height(p) {
        const axis = sweep.metric_axes[m.metric];
        return axis && p.key in axis.heights ? axis.heights[p.key] : null;
      },
      lines: () => sweep.points.filter((p) => m.inRung(p) && p.heights && m.height(p) !== null),
      best() {
        const view = m.view;
        const key = view && view.ranked.length ? view.ranked[0] : null;
        return sweep.points.find((p) => p.key === key) || null;
      },
      chose() {
        const view = m.view;
        m.ranks = new Map((view ? view.ranked : []).map((key, i) => [key, i + 1]));
      },
    };
    m.chose();
    return m;
  }

  function select(name, options, chosen, changed) {
    const node = el("select", { name });
    for (const [value, text] of options) {
      const option = el("option", { value }, text);
      if (value === chosen) option.selected = true;
      node.appendChild(option);
    }
    node.addEventListener("change", () => changed(node.value));
    return node;
  }

  function controls(section, m, redraw) {
    const sweep = m.sweep;
    const bar = el("div", { class: "controls" });
    if (sweep.metrics.length) {
      const label = el("label", {}, "Metric ");
      const said = el("span", { class: "muted said" });
      const say = () => {
        const found = sweep.metrics.find((x) => x.name === m.metric);
        said.textContent = found ? ` ${found.goal}: ${found.said}` : "";
      };
      label.appendChild(select("metric", sweep.metrics.map((x) => [x.name, x.name]), m.metric, (v) => {
        m.metric = v;
        delete m.brushes.metric; // its axis is another one now
        say();
        redraw();
      }));
      say();
      bar.append(label, said);
    }
    if (sweep.rungs) {
      const label = el("label", {}, "Rung ");
      const counted = (r) => sweep.points.filter((p) => r === ALL || String(p.rung) === r).length;
      const keys = [...sweep.rungs.values.map((_, k) => String(k)).reverse(), ALL]; // the last first
      label.appendChild(select("rung", keys.map((r) => [r, `${rungText(sweep, r)}: ${counted(r)} point(s)`]), m.rung, (v) => {
        m.rung = v;
        redraw();
      }));
      bar.appendChild(label);
    }
    section.appendChild(bar);
  }

  function headline(parent, m) {
    const sweep = m.sweep, view = m.view;
    const shown = sweep.points.filter(m.inRung);
    const where = sweep.rungs ? ` in ${rungText(sweep, m.rung)}` : "";
    if (!view) {
      parent.appendChild(el("p", { class: "headline" }, `No numeric metric yet. ${shown.length} point(s).`));
      return;
    }
    const finished = view.ranked.length + view.ruled_out;
    const out = view.ruled_out ? `, ${view.ruled_out} of them ruled out by a constraint (${sweep.constraints.join(", ")})` : "";
    parent.appendChild(el("p", { class: "headline" },
      `${m.metric} (${m.goal}). ${shown.length} point(s)${where}; ${finished} finished with ${m.metric}${out}.`));
    const best = m.best();
    if (!best) {
      const why = view.ruled_out ? "No finished point keeps every constraint." : `No point has finished with ${m.metric} yet.`;
      parent.appendChild(el("p", { class: "best-line none" }, why));
      return;
    }
    const first = sweep.rungs && m.rung === ALL ? "Best (the highest rung first)" : "Best";
    const line = el("p", { class: "best-line" }, `${first}: ${best.experiment}: ${m.metric} = `);
    line.appendChild(el("strong", { class: "best-value" }, number(m.value(best))));
    line.append(" at ");
    line.appendChild(el("code", {}, Object.entries(best.params).map(([k, v]) => `${k}=${v}`).join(" ")));
    const url = safeUrl(best.url);
    if (url) line.append(" ", el("a", { href: url, target: "_blank", rel: "noopener" }, "open"));
    parent.appendChild(line);
  }

  // -- a point's detail -----------------------------------------------------------------------

  let detail = null;

  function show(m, key) {
    const sweep = m.sweep;
    const p = sweep.points.find((x) => x.key === key);
    m.selected = p ? key : null;
    document.querySelectorAll(".selected").forEach((n) => n.classList.remove("selected"));
    if (!p) {
      detail.hidden = true;
      return;
    }
    document.querySelectorAll(`[data-sweep="${CSS.escape(sweep.name)}"] [data-key="${CSS.escape(key)}"]`)
      .forEach((n) => n.classList.add("selected"));
    const close = el("button", { class: "close", type: "button", "aria-label": "close" }, "×");
    close.addEventListener("click", () => show(m, null));
    const title = el("h3", {});
    const url = safeUrl(p.url);
    title.appendChild(url ? el("a", { href: url, target: "_blank", rel: "noopener" }, p.experiment) : el("span", {}, p.experiment));
    const facts = [["sweep", sweep.name], ["state", p.state_text]];
    if (p.rung !== null) facts.push(["rung", rungText(sweep, String(p.rung))]);
    if (p.parent) facts.push(["promoted from", p.parent]);
    const rank = m.ranks.get(p.key);
    if (rank) facts.push(["rank", `${rank} by ${m.metric} in ${sweep.rungs ? rungText(sweep, m.rung) : "the sweep"}`]);
    if (p.ruled_out) facts.push(["ruled out by", p.ruled_out]);
    detail.replaceChildren(close, title, pairs("facts", facts),
      el("h4", {}, "Parameters"), pairs("params", Object.entries(p.params)),
      el("h4", {}, "Metrics"), pairs("metrics", Object.entries(p.metrics)));
    detail.hidden = false;
  }

  function pairs(name, rows) {
    const table = el("table", { class: `pairs ${name}` });
    for (const [k, v] of rows) {
      const tr = el("tr");
      tr.append(el("th", { scope: "row" }, k), el("td", {}, number(v)));
      table.appendChild(tr);
    }
    return table;
  }

  // -- a sweep ----------------------------------------------------------------------------------

  function anchor(sweep) {
    return `sweep-${sweep.name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  }

  function sweepSection(main, sweep, several) {
    const section = el("section", { class: "sweep", "data-sweep": sweep.name, id: anchor(sweep) });
    const title = el("h2", {}, "Results: ");
    title.append(el("code", {}, sweep.name), ` — ${sweep.path}`);
    if (several) title.append(" ", el("a", { href: "#contents", class: "up" }, "↑ contents"));
    section.appendChild(title);
    const m = model(sweep);
    const body = el("div", { class: "view" });
    const redraw = () => {
      m.chose();
      body.replaceChildren();
      draw(body, m, (key) => show(m, key));
      if (m.selected) show(m, m.selected);
    };
    controls(section, m, redraw);
    section.appendChild(body);
    redraw();
    main.appendChild(section);
  }

  function draw(body, m, pick) {
    const sweep = m.sweep;
    headline(body, m);
    let lines = () => {};
    const update = () => {
      const ranges = Object.entries(m.brushes);
      const drawn = m.lines();
      const inside = (p) => ranges.every(([axis, [lo, hi]]) => {
        const h = axis === "metric" ? m.height(p) : p.heights[Number(axis)];
        return h >= lo && h <= hi;
      });
      const shown = ranges.length ? drawn.filter(inside) : sweep.points.filter(m.inRung);
      lines(new Set((ranges.length ? shown : drawn).map((p) => p.key)));
      rows(shown);
      filter.textContent = ranges.length
        ? `${shown.length} of ${drawn.length} drawn point(s) in the brushed range(s).`
        : `${shown.length} point(s).`;
    };
    if (m.view && sweep.axes.length && m.lines().length) {
      body.appendChild(el("h3", {}, "Parallel coordinates"));
      body.appendChild(el("p", { class: "muted" }, "Drag along an axis to keep the points in that range; click the axis to clear it; click a line for its point. Red: the best point; dashed: ruled out by a constraint."));
      lines = parts.parallel(body, m, update, pick);
    }
    body.appendChild(el("h3", {}, "Points"));
    const filter = el("p", { class: "filter" });
    body.appendChild(filter);
    const rows = parts.table(body, m, update, pick);
    update();
    if (m.view) {
      parts.importance(body, m);
      parts.progress(body, m);
    }
    const keys = new Set(sweep.points.filter(m.inRung).map((p) => p.key));
    for (const extra of registered) {
      if (sweep[extra.key] === undefined) continue;
      const part = el("section", { class: "extra", "data-section": extra.key });
      part.appendChild(el("h3", {}, extra.title));
      extra.render(part, sweep, sweep[extra.key], { metric: m.metric, rung: m.rung, keys });
      body.appendChild(part);
    }
  }

  // -- the table of contents --------------------------------------------------------------------

  function contents(main, sweeps) {
    const nav = el("nav", { id: "contents", class: "contents" });
    nav.appendChild(el("h2", {}, `Contents: ${sweeps.length} sweeps`));
    const list = el("ol");
    for (const sweep of sweeps) {
      const m = model(sweep);
      const item = el("li", { "data-sweep": sweep.name });
      item.appendChild(el("a", { href: `#${anchor(sweep)}` }, sweep.name));
      const best = m.best();
      const where = sweep.rungs ? ` of ${rungText(sweep, m.rung)}` : "";
      const said = !m.view ? "no numeric metric yet"
        : best ? `best ${m.metric}${where}: ${number(m.value(best))}` : `no point ranked by ${m.metric} yet`;
      item.append(el("span", { class: "muted" }, ` — ${sweep.path}: ${sweep.points.length} point(s); ${said}`));
      list.appendChild(item);
    }
    nav.appendChild(list);
    main.appendChild(nav);
  }

  window.addEventListener("DOMContentLoaded", () => {
    const data = JSON.parse(document.getElementById("sweep-data").textContent);
    const main = document.getElementById("sweeps");
    detail = el("aside", { id: "detail", class: "detail", "aria-live": "polite" });
    detail.hidden = true;
    document.body.appendChild(detail);
    if (!data.sweeps.length) main.appendChild(el("p", {}, "No sweep."));
    if (data.sweeps.length > 1) contents(main, data.sweeps);
    for (const sweep of data.sweeps) sweepSection(main, sweep, data.sweeps.length > 1);
    document.body.setAttribute("data-ready", "true");
  });
})();
