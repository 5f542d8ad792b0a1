// The plot panel: uPlot charts of the recorded time series, their cursors following the 3D view.
import uPlot from 'uplot';

function colour(i, n) {
  return `hsl(${Math.round((360 * i) / Math.max(n, 1) + 210) % 360}, 65%, 45%)`;
}

// The series of system s: offsets into a frame and names (scene member plot_systems; a recording
// without it has the main system's only, in layout and plots).
export function seriesOf(d, s) {
  const P = d.plot_systems && d.plot_systems[s];
  if (P) return { ...P, names: { joint_q: P.joint_q_names, joint_tau: P.joint_tau_names, body: P.body_names } };
  if (s !== d.main) return null;
  const L = d.layout;
  return { base_vel: L.base_vel, joint_q: L.joint_q, joint_tau: L.joint_tau, body_fn: L.body_fn,
    njq: L.njq, njv: L.njv, nbm: L.nbm, names: d.plots };
}

// Systems the plots can follow: [{index, label}] (every system of the world).
export function plotSystems(d) {
  return (d.systems || []).map((s, i) => ({ index: i, label: `${s.name || 'system'} (${i})` }))
    .filter((s) => seriesOf(d, s.index));
}

// The groups of series of system s (default: the main system): each a title and
// {label, value(frame)}. A fixed base has no base height or velocity panels.
export function plotGroups(d, src, s = d.main) {
  const L = d.layout, groups = [];
  const P = s >= 0 && d.systems && d.systems[s] ? seriesOf(d, s) : null;
  if (P) {
    const b0 = L.poses + 7 * d.systems[s].body0;
    const names = P.names;
    if (d.systems[s].base !== 'fixed') {
      groups.push({ title: 'Base height (m)', series: [{ label: 'z', value: (f) => f[b0 + 2] }] });
      groups.push({
        title: 'Base velocity (m/s)',
        series: ['vx', 'vy', 'vz'].map((label, i) => ({ label, value: (f) => f[P.base_vel + i] })),
      });
    }
    if (P.njq > 0)
      groups.push({ title: 'Joint positions (rad, m)', series: names.joint_q.map((label, i) => ({ label, value: (f) => f[P.joint_q + i] })) });
    if (P.njv > 0)
      groups.push({ title: 'Joint torques (N m, N)', series: names.joint_tau.map((label, i) => ({ label, value: (f) => f[P.joint_tau + i] })) });
    // bodies that touch something (all of them while live)
    const touched = names.body.map((label, i) => ({ label, value: (f) => f[P.body_fn + i], i }))
      .filter((x) => !src.frames || anyNonZero(src, P.body_fn + x.i));
    if (touched.length) groups.push({ title: 'Contact normal forces (N)', series: touched });
  }
  groups.push({
    title: (d.systems || []).length > 1 ? 'Energy, all systems (J)' : 'Energy (J)',
    series: [
      { label: 'kinetic', value: (f) => f[L.energy] },
      { label: 'potential', value: (f) => f[L.energy + 1] },
      { label: 'total', value: (f) => f[L.energy] + f[L.energy + 1] },
    ],
  });
  return groups;
}

// Above this many series a panel gets a filterable legend instead of uPlot's table.
export const LEGEND_MAX = 24;

// Which series match a filter text: comma- or space-separated terms, any of them a
// case-insensitive substring of the label (empty: all).
export function matchSeries(labels, text) {
  const terms = String(text || '').toLowerCase().split(/[\s,]+/).filter(Boolean);
  return labels.map((l) => !terms.length || terms.some((t) => l.toLowerCase().includes(t)));
}

function anyNonZero(src, k) {
  for (let i = 0; i < src.n; i++) if (src.frame(i)[k] !== 0) return true;
  return false;
}

export class Plots {
  constructor(el, d, src, onSeek, system) {
    this.el = el;
    this.d = d;
    this.src = src;
    this.onSeek = onSeek;
    this.hover = false;
    this.plots = [];
    const systems = plotSystems(d);
    let s = d.main;
    if (system != null && system !== '') {
      const hit = systems.find((x) => String(x.index) === String(system) || d.systems[x.index].name === system);
      if (hit) s = hit.index;
    }
    if (systems.length > 1) this.buildSelector(systems, s);
    this.box = document.createElement('div');
    el.appendChild(this.box);
    this.build(s);
  }

  // A selector of the system the plots follow (worlds of several systems).
  buildSelector(systems, s) {
    const row = document.createElement('div');
    row.className = 'plot-system';
    const label = document.createElement('label');
    label.textContent = 'Plots of ';
    const sel = document.createElement('select');
    sel.id = 'plot-system';
    for (const x of systems) {
      const o = document.createElement('option');
      o.value = String(x.index);
      o.textContent = x.label;
      sel.appendChild(o);
    }
    sel.value = String(s);
    sel.addEventListener('change', () => this.build(Number(sel.value)));
    label.appendChild(sel);
    row.appendChild(label);
    this.el.appendChild(row);
    this.select = sel;
  }

  // (Re)build the panels for system s.
  build(s) {
    for (const u of this.plots) u.destroy();
    this.plots = [];
    this.box.textContent = '';
    this.system = s;
    this.el.setAttribute('data-plot-system', String(s));
    this.groups = plotGroups(this.d, this.src, s);
    const width = Math.max(200, this.el.clientWidth - 14);
    for (const g of this.groups) {
      const box = document.createElement('div');
      box.className = 'plot';
      const h = document.createElement('h3');
      h.textContent = g.title;
      box.appendChild(h);
      this.box.appendChild(box);
      const n = g.series.length;
      const opts = {
        width, height: 140,
        legend: { show: n <= LEGEND_MAX, live: true },
        cursor: { sync: { key: 'talus' }, drag: { x: false, y: false }, points: { size: 5 } },
        scales: { x: { time: false } },
        axes: [{ size: 28 }, { size: 54 }],
        series: [{ label: 't (s)', value: (u, v) => (v == null ? '-' : v.toFixed(3)) },
          ...g.series.map((x, i) => ({ label: x.label, stroke: colour(i, n), width: 1, points: { show: false },
            value: (u, v) => (v == null ? '-' : v.toPrecision(4)) }))],
      };
      const u = new uPlot(opts, this.columns(g), box);
      u.over.addEventListener('mouseenter', () => (this.hover = true));
      u.over.addEventListener('mouseleave', () => (this.hover = false));
      u.over.addEventListener('click', () => {
        const t = u.posToVal(u.cursor.left, 'x');
        if (Number.isFinite(t)) this.onSeek(t);
      });
      if (n > LEGEND_MAX) this.filterLegend(box, g, u);
      this.plots.push(u);
    }
  }

  // The legend of a panel with many series: a filter box (terms matched against the series
  // names) and one chip per series, clicked to show or hide it.
  filterLegend(box, g, u) {
    const n = g.series.length, labels = g.series.map((x) => x.label);
    const shown = labels.map(() => true);
    const wrap = document.createElement('div');
    wrap.className = 'legend-filter';
    const input = document.createElement('input');
    input.type = 'search';
    input.placeholder = `filter ${n} series (e.g. knee, LF_)`;
    const count = document.createElement('span');
    count.className = 'legend-count';
    const chips = document.createElement('div');
    chips.className = 'legend-chips';
    const chip = labels.map((label, i) => {
      const c = document.createElement('button');
      c.type = 'button';
      c.className = 'legend-chip';
      c.title = label;
      const sw = document.createElement('i');
      sw.style.background = colour(i, n);
      c.appendChild(sw);
      c.appendChild(document.createTextNode(label));
      c.addEventListener('click', () => set(i, !shown[i]));
      chips.appendChild(c);
      return c;
    });
    const set = (i, v) => {
      shown[i] = v;
      chip[i].classList.toggle('off', !v);
      u.setSeries(i + 1, { show: v });
      count.textContent = `${shown.filter(Boolean).length} of ${n} shown`;
    };
    input.addEventListener('input', () => {
      const m = matchSeries(labels, input.value);
      u.batch(() => m.forEach((v, i) => set(i, v)));
    });
    count.textContent = `${n} of ${n} shown`;
    wrap.appendChild(input);
    wrap.appendChild(count);
    wrap.appendChild(chips);
    box.appendChild(wrap);
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
