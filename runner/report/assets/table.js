/* The table of points (runner/report/web.py inlines this file after page.js): each point of the
 * rung shown, or those in the brushed ranges, with its rank by the chosen metric in that view,
 * its experiment (linked), state, a halving's rung and budget, the metric, its parameters and,
 * for a sweep with constraints, the one it breaks. Click a header to sort (again to reverse),
 * a row for the point's detail. */
"use strict";

(function () {
  const page = window.SweepPage;
  const { el } = page;

  function columns(m) {
    const sweep = m.sweep;
    const out = [
      { name: "#", get: (p) => m.ranks.get(p.key) || null },
      { name: "experiment", get: (p) => p.experiment, link: true },
      { name: "state", get: (p) => p.state_text },
    ];
    if (sweep.rungs) {
      const budget = sweep.rungs.param;
      out.push({ name: "rung", get: (p) => p.rung });
      out.push({ name: budget, get: (p) => (budget in p.params ? p.params[budget] : null) });
    }
    out.push({ name: m.metric || "metric", get: (p) => m.value(p), metric: true });
    for (const name of sweep.params) {
      out.push({ name, get: (p) => (name in p.params ? p.params[name] : null) });
    }
    if (sweep.constraints.length) out.push({ name: "ruled out by", get: (p) => p.ruled_out || null });
    return out;
  }

  function compare(a, b) {
    if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;
    if (b === null || b === undefined) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  page.part("table", (parent, m, update, pick) => {
    const cols = columns(m);
    const wrap = el("div", { class: "table-wrap" });
    const tbl = el("table", { class: "points" });
    const head = el("tr");
    cols.forEach((c, i) => {
      const th = el("th", { scope: "col", "data-column": c.metric ? "metric" : c.name }, c.name);
      th.addEventListener("click", () => {
        m.sort = { column: i, direction: m.sort.column === i ? -m.sort.direction : 1 };
        update();
      });
      head.appendChild(th);
    });
    const thead = el("thead");
    thead.appendChild(head);
    const body = el("tbody");
    tbl.append(thead, body);
    wrap.appendChild(tbl);
    parent.appendChild(wrap);
    const best = m.best();
    return (rows) => {
      const { column, direction } = m.sort;
      const by = cols[Math.min(column, cols.length - 1)];
      const rank = (p) => m.ranks.get(p.key) || null;
      const sorted = rows.slice().sort((a, b) => {
        const order = compare(by.get(a), by.get(b));
        return (order || compare(rank(a), rank(b))) * (order ? direction : 1);
      });
      head.querySelectorAll("th").forEach((th, i) => {
        if (i === column) th.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
        else th.removeAttribute("aria-sort");
      });
      body.replaceChildren(...sorted.map((p) => row(cols, p, best, pick)));
    };
  });

  function row(cols, p, best, pick) {
    const kind = [best && p.key === best.key ? "best" : "", p.ruled_out ? "ruled-out" : ""];
    const tr = el("tr", { "data-key": p.key, class: kind.join(" ").trim() });
    for (const c of cols) {
      const value = c.get(p);
      const td = el("td", typeof value === "number" ? { class: "number" } : {});
      const url = c.link ? page.safeUrl(p.url) : null;
      if (url) td.appendChild(el("a", { href: url, target: "_blank", rel: "noopener" }, String(value)));
      else td.textContent = page.number(value);
      tr.appendChild(td);
    }
    tr.addEventListener("click", (event) => {
      if (!event.target.closest("a")) pick(p.key);
    });
    return tr;
  }
})();
