/* The Pareto front section (runner/report/web.py registers it under `pareto`): every finished
 * point by the first two objectives, the Pareto set black and joined, the points a constraint
 * rules out as orange crosses (their title says why).
 * Its data (runner.report.pareto.data): {objectives: [{metric, goal}], constraints: [text],
 * pareto: [experiment], points: [{experiment, values, feasible, ruled_out}]}. */
"use strict";

(function () {
  const page = window.SweepPage;
  page.section("pareto", "Pareto front", (parent, sweep, data) => {
    if (data.objectives.length < 2) return; // constraints alone: nothing to draw
    const [first, second] = data.objectives;
    const inSet = new Set(data.pareto);
    const points = data.points.filter((p) => p.values.length >= 2);
    const limits = data.constraints.length ? ` Constraints: ${data.constraints.join(", ")}.` : "";
    parent.appendChild(page.el("p", { class: "muted" },
      `${data.pareto.length} point(s) no other beats on both ${first.metric} (${first.goal}) and`
      + ` ${second.metric} (${second.goal}); crosses: ruled out by a constraint.${limits}`));
    const width = 640, height = 310, left = 60, right = 20, top = 28, bottom = 40;
    const xs = points.map((p) => p.values[0]), ys = points.map((p) => p.values[1]);
    const [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    const sx = (v) => left + ((v - x0) / (x1 - x0 || 1)) * (width - left - right);
    const sy = (v) => top + (1 - (v - y0) / (y1 - y0 || 1)) * (height - top - bottom);
    const root = page.svg("svg", { class: "pareto", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" });
    root.appendChild(page.svg("line", { class: "axis", x1: left, x2: left, y1: top, y2: height - bottom }));
    root.appendChild(page.svg("line", { class: "axis", x1: left, x2: width - right, y1: height - bottom, y2: height - bottom }));
    for (const v of [y0, y1]) root.appendChild(page.svg("text", { x: 4, y: sy(v) + 4 }, page.number(v)));
    for (const v of [x0, x1]) root.appendChild(page.svg("text", { x: sx(v) - 4, y: height - bottom + 16 }, page.number(v)));
    root.appendChild(page.svg("text", { x: width / 2, y: height - 4, class: "axis-name x-name" }, `${first.metric} (${first.goal})`));
    root.appendChild(page.svg("text", { x: left, y: top - 14, class: "axis-name y-name" }, `${second.metric} (${second.goal})`));
    const front = points.filter((p) => inSet.has(p.experiment)).sort((a, b) => a.values[0] - b.values[0]);
    if (front.length > 1) {
      const d = front.map((p, i) => `${i ? "L" : "M"}${sx(p.values[0]).toFixed(1)},${sy(p.values[1]).toFixed(1)}`);
      root.appendChild(page.svg("path", { class: "front", d: d.join(""), fill: "none", stroke: "black" }));
    }
    for (const p of points) {
      const [x, y] = [sx(p.values[0]), sy(p.values[1])];
      const mark = p.feasible
        ? page.svg("circle", { class: inSet.has(p.experiment) ? "point pareto" : "point", cx: x, cy: y, r: 4,
            fill: inSet.has(p.experiment) ? "black" : "#1f77b4" })
        : page.svg("path", { class: "point ruled-out", d: `M${x - 4},${y - 4}L${x + 4},${y + 4}M${x - 4},${y + 4}L${x + 4},${y - 4}`,
            stroke: "#ff7f0e", "stroke-width": 2 });
      mark.setAttribute("data-experiment", p.experiment);
      mark.appendChild(page.svg("title", {}, p.feasible ? p.experiment : `${p.experiment}: ${p.ruled_out}`));
      root.appendChild(mark);
    }
    parent.appendChild(root);
  });
})();
