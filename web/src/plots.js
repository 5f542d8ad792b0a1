// The plot panel: uPlot charts of the recorded time series, their cursors following the 3D view.
import uPlot from 'uplot';

function colour(i, n) {
  return `hsl(${Math.round((360 * i) / Math.max(n, 1) + 210) % 360}, 65%, 45%)`;
}

// The groups of series: each a title and {label, value(frame)}.
export function plotGroups(d, src) {
  const L = d.layout, groups = [];
  if (d.main >= 0) {
    const b0 = L.poses + 7 * d.systems[d.main].body0;
    const names = d.plots;
    groups.push({ title: 'Base height (m)', series: [{ label: 'z', value: (f) => f[b0 + 2] }] });
    groups.push({
      title: 'Base velocity (m/s)',
      series: ['vx', 'vy', 'vz'].map((label, i) => ({ label, value: (f) => f[L.base_vel + i] })),
    });
    if (L.njq > 0)
      groups.push({ title: 'Joint positions (rad, m)', series: names.joint_q.map((label, i) => ({ label, value: (f) => f[L.joint_q + i] })) });
    if (L.njv > 0)
      groups.push({ title: 'Joint torques (N m, N)', series: names.joint_tau.map((label, i) => ({ label, value: (f) => f[L.joint_tau + i] })) });
    // bodies that touch something (all of them while live)
    const touched = names.body.map((label, i) => ({ label, value: (f) => f[L.body_fn + i], i }))
      .filter((s) => !src.frames || anyNonZero(src, L.body_fn + s.i));
    if (touched.length) groups.push({ title: 'Contact normal forces (N)', series: touched });
  }
  groups.push({
    title: 'Energy (J)',
    series: [
      { label: 'kinetic', value: (f) => f[L.energy] },
      { label: 'potential', value: (f) => f[L.energy + 1] },
      { label: 'total', value: (f) => f[L.energy] + f[L.energy + 1] },
    ],
  });
  return groups;
}

function anyNonZero(src, k) {
  for (let i = 0; i < src.n; i++) if (src.frame(i)[k] !== 0) return true;
  return false;
}

export class Plots {
  constructor(el, d, src, onSeek) {
    this.el = el;
    this.src = src;
    this.groups = plotGroups(d, src);
    this.plots = [];
    this.hover = false;
    const width = Math.max(200, el.clientWidth - 14);
    for (const g of this.groups) {
      const box = document.createElement('div');
      box.className = 'plot';
      const h = document.createElement('h3');
      h.textContent = g.title;
      box.appendChild(h);
      el.appendChild(box);
      const n = g.series.length;
      const opts = {
        width, height: 140,
        legend: { show: n <= 24, live: true },
        cursor: { sync: { key: 'talus' }, drag: { x: false, y: false }, points: { size: 5 } },
        scales: { x: { time: false } },
        axes: [{ size: 28 }, { size: 54 }],
        series: [{ label: 't (s)', value: (u, v) => (v == null ? '-' : v.toFixed(3)) },
          ...g.series.map((s, i) => ({ label: s.label, stroke: colour(i, n), width: 1, points: { show: false },
            value: (u, v) => (v == null ? '-' : v.toPrecision(4)) }))],
      };
      const u = new uPlot(opts, this.columns(g), box);
      u.over.addEventListener('mouseenter', () => (this.hover = true));
      u.over.addEventListener('mouseleave', () => (this.hover = false));
      u.over.addEventListener('click', () => {
        const t = u.posToVal(u.cursor.left, 'x');
        if (Number.isFinite(t)) onSeek(t);
      });
      this.plots.push(u);
    }
  }

  columns(g) {
    const n = this.src.n, x = new Float64Array(n);
    const ys = g.series.map(() => new Float64Array(n));
    for (let i = 0; i < n; i++) {
      const f = this.src.frame(i);
      x[i] = f[0];
      for (let k = 0; k < ys.length; k++) ys[k][i] = g.series[k].value(f);
    }
    return [x, ...ys];
  }

  // New frames arrived (live view).
  refresh() {
    this.groups.forEach((g, k) => this.plots[k].setData(this.columns(g)));
  }

  // Put every cursor at time t (unless the mouse is on a plot).
  setTime(t) {
    if (this.hover) return;
    for (const u of this.plots) {
      const left = u.valToPos(t, 'x');
      if (Number.isFinite(left)) u.setCursor({ left, top: 8 }, false);
    }
  }

  resize() {
    const width = Math.max(200, this.el.clientWidth - 14);
    for (const u of this.plots) u.setSize({ width, height: 140 });
  }
}
