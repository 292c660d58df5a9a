/* The learning curves section (runner/report/web.py registers it under `learning_curves`):
 * each point's reported value by step, one line per point of the rung shown, the best point red
 * and drawn last.
 * Its data: {metric, points: [{experiment, key, state, best, steps: [[step, value], ...]}]}. */
"use strict";

(function () {
  const page = window.SweepPage;
  page.section("learning_curves", "Learning curves", (parent, sweep, data, shown) => {
    const lines = data.points.filter((p) => p.steps.length && (!shown || shown.keys.has(p.key)));
    if (!lines.length) {
      parent.appendChild(page.el("p", { class: "muted" }, "No point shown reported a learning curve."));
      return;
    }
    parent.appendChild(page.el("p", { class: "muted" },
      `${data.metric} by step, as each point reported it ([sweep-metric] lines); red: the best point.`));
    const width = 640, height = 260, left = 60, right = 20, top = 14, bottom = 36;
    const xs = lines.flatMap((p) => p.steps.map((s) => s[0]));
    const ys = lines.flatMap((p) => p.steps.map((s) => s[1]));
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    const sx = (v) => left + ((v - x0) / (x1 - x0 || 1)) * (width - left - right);
    const sy = (v) => top + (1 - (v - y0) / (y1 - y0 || 1)) * (height - top - bottom);
    const root = page.svg("svg", { class: "curves", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    root.appendChild(page.svg("line", { class: "axis", x1: left, x2: left, y1: top, y2: height - bottom }));
    root.appendChild(page.svg("line", { class: "axis", x1: left, x2: width - right, y1: height - bottom, y2: height - bottom }));
    for (const v of [y0, y1]) root.appendChild(page.svg("text", { x: 4, y: sy(v) + 4 }, page.number(v)));
    for (const v of [x0, x1]) root.appendChild(page.svg("text", { x: sx(v) - 4, y: height - bottom + 16 }, String(v)));
    root.appendChild(page.svg("text", { x: width / 2, y: height - 4, class: "axis-name" }, "step"));
    const ordered = [...lines.filter((p) => !p.best), ...lines.filter((p) => p.best)];
    for (const p of ordered) {
      const d = p.steps.map((s, i) => `${i ? "L" : "M"}${sx(s[0]).toFixed(1)},${sy(s[1]).toFixed(1)}`).join("");
      const line = page.svg("path", { class: p.best ? "curve best" : "curve", d, "data-experiment": p.experiment });
      line.appendChild(page.svg("title", {}, p.experiment));
      root.appendChild(line);
    }
    parent.appendChild(root);
  });
})();
