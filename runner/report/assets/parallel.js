/* The parallel coordinates (runner/report/web.py inlines this file after page.js): one axis per
 * swept parameter, then a halving's rung, then the chosen metric; one line per point of the
 * rung shown finished with that metric, coloured by it, the best red and drawn last, a point
 * ruled out by a constraint dashed. Drag along an axis to keep the points in that range (the
 * brushes outlive a change of rung; the metric's goes with its metric); click an axis to clear
 * its range; click a line for its point. */
"use strict";

(function () {
  const page = window.SweepPage;
  const { svg } = page;
  const TOP = 28, HEIGHT = 300, ABSENT = -0.12, LEFT = 48, RIGHT = 110;

  page.part("parallel", (parent, m, update, pick) => {
    const sweep = m.sweep;
    const axes = [
      ...sweep.axes.map((axis, j) => ({ ...axis, id: String(j), place: (p) => p.heights[j] })),
      { name: m.metric, ticks: sweep.metric_axes[m.metric].ticks, id: "metric", place: (p) => m.height(p) },
    ];
    const width = Math.max(640, 150 * axes.length);
    const y = (h) => TOP + (1 - h) * HEIGHT;
    const step = axes.length > 1 ? (width - LEFT - RIGHT) / (axes.length - 1) : 0;
    const x = (j) => (axes.length > 1 ? LEFT + j * step : width / 2);
    const height = y(ABSENT) + 36;
    const root = svg("svg", {
      class: "parallel", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-label": `parallel coordinates of ${sweep.name} by ${m.metric}`,
    });
    const best = m.best();
    const rank = (p) => m.ranks.get(p.key) || Infinity;
    const points = m.lines().sort((a, b) => rank(b) - rank(a)); // the best last, on top
    const lines = new Map();
    for (const p of points) {
      const d = axes.map((axis, j) => `${j ? "L" : "M"}${x(j).toFixed(1)},${y(axis.place(p)).toFixed(1)}`).join("");
      const isBest = best !== null && p.key === best.key;
      const kind = isBest ? "line best" : p.ruled_out ? "line ruled-out" : "line";
      const line = svg("path", { class: kind, d, "data-key": p.key, "data-experiment": p.experiment });
      const t = m.goal === "maximize" ? 1 - m.height(p) : m.height(p);
      if (!isBest && !p.ruled_out) line.setAttribute("stroke", page.colour(t));
      const why = p.ruled_out ? ` (ruled out: ${p.ruled_out})` : "";
      line.appendChild(svg("title", {}, `${p.experiment}: ${m.metric} = ${page.number(m.value(p))}${why}`));
      const hit = svg("path", { class: "hit", d, "data-key": p.key });
      hit.addEventListener("click", () => pick(p.key));
      line.addEventListener("click", () => pick(p.key));
      root.append(line, hit);
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
      const kept = m.brushes[axis.id];
      if (kept) {
        brush.setAttribute("y", y(kept[1]));
        brush.setAttribute("height", y(kept[0]) - y(kept[1]));
        brush.setAttribute("visibility", "visible");
      }
      const area = svg("rect", {
        class: "brush-area", "data-axis": axis.name, x: x(j) - 12, width: 24,
        y: y(1) - 6, height: y(ABSENT) - y(1) + 12,
      });
      group.append(brush, area);
      brushable(root, area, brush, (range) => {
        if (range === null) delete m.brushes[axis.id];
        else m.brushes[axis.id] = range.map((v) => 1 - (v - TOP) / HEIGHT).sort((a, b) => a - b);
        update();
      });
      root.appendChild(group);
    });
    parent.appendChild(root);
    return (visible) => {
      for (const [key, line] of lines) line.classList.toggle("dim", !visible.has(key));
    };
  });

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
})();
