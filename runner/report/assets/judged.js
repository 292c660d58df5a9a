/* The importance bars and the best so far of the view shown (runner/report/web.py inlines this
 * file after page.js), as runner/report/views.py computed them: the bars say the method that
 * computed them and, when no parameter has a share, why; a halving's every-rung view has
 * neither (its rungs run at different budgets). */
"use strict";

(function () {
  const page = window.SweepPage;
  const { el, svg, number } = page;
  const SHORT = { fanova: "fANOVA", "main-effect variance": "main effects" };

  page.part("importance", (parent, m) => {
    const view = m.view;
    const where = m.sweep.rungs ? `, ${page.rungText(m.sweep, m.rung)}` : "";
    parent.appendChild(el("h3", {}, `Parameter importance for ${m.metric}${where}`));
    const imp = view.importance;
    if (imp === null) {
      parent.appendChild(el("p", { class: "muted note" }, `Not judged: ${view.apart}.`));
      return;
    }
    if (imp.note) {
      parent.appendChild(el("p", { class: "muted note" }, `Not judged: ${imp.note}.`));
      const names = imp.parameters.map((s) => s.name).join(", ");
      if (names) parent.appendChild(el("p", { class: "muted" }, `Parameters: ${names}.`));
      return;
    }
    const bars = el("div", { class: "bars importance" });
    for (const s of imp.parameters) {
      bars.appendChild(el("code", {}, s.name));
      const bar = el("div", { class: s.share === null ? "bar none" : "bar", "data-parameter": s.name });
      bar.style.width = `${(s.share || 0) * 100}%`;
      bars.appendChild(bar);
      const among = `${s.points} point(s)${s.condition ? `, ${s.condition}` : ""}`;
      const text = s.share === null ? `${s.note} (${among})` : `${s.share.toFixed(3)} (${among}; ${SHORT[s.method] || s.method})`;
      bars.appendChild(el("span", { class: "muted share", "data-parameter": s.name }, text));
    }
    parent.appendChild(bars);
    parent.appendChild(el("p", { class: "muted method" }, imp.method));
    if (imp.parameters.some((s) => s.condition)) {
      parent.appendChild(el("p", { class: "muted" }, "A conditional parameter is judged among the points where it exists."));
    }
  });

  page.part("progress", (parent, m) => {
    const view = m.view, sweep = m.sweep;
    const of = sweep.rungs ? ` of ${page.rungText(sweep, m.rung)}` : "";
    parent.appendChild(el("h3", {}, `Best ${m.metric} so far${of}`));
    const steps = view.progress;
    if (steps === null) {
      parent.appendChild(el("p", { class: "muted note" }, `Not drawn: ${view.apart}.`));
      return;
    }
    if (!steps.length) {
      const why = view.ruled_out ? "no finished point keeps every constraint" : `no point has finished with ${m.metric} yet`;
      parent.appendChild(el("p", { class: "muted note" }, `Not drawn: ${why}.`));
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
    for (const v of [...new Set([y0, y1])]) root.appendChild(svg("text", { class: "y-tick", x: 4, y: sy(v) + 4 }, number(v)));
    const ticks = [...new Set([x0, Math.round((x0 + x1) / 2), x1])];
    for (const v of ticks) root.appendChild(svg("text", { x: sx(v) - 4, y: height - bottom + 16 }, String(v)));
    const along = sweep.by_round ? "round" : `point${of}, in the sweep's order`;
    root.appendChild(svg("text", { x: width / 2, y: height - 4, class: "axis-name" }, along));
    for (const s of steps) root.appendChild(svg("circle", { class: "dot", cx: sx(s.x), cy: sy(s.value), r: 3 }));
    const d = steps.map((s, i) => (i ? `H${sx(s.x).toFixed(1)}V${sy(s.best).toFixed(1)}` : `M${sx(s.x).toFixed(1)},${sy(s.best).toFixed(1)}`));
    root.appendChild(svg("path", { class: "step", d: d.join("") }));
    const last = steps[steps.length - 1];
    root.appendChild(svg("text", { class: "best-so-far", x: sx(last.x) - 4, y: sy(last.best) - 8 }, number(last.best)));
    parent.appendChild(root);
  });
})();
