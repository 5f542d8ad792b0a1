// The Talus viewer page: a recording embedded in the page (<script id="talus-data">), or, when
// the page has none, the live view of a running simulation over a WebSocket on the same host.
// Scripts see when the page is ready: <body data-talus-frames="N"> once the first frame is
// drawn, data-talus-error="..." when anything failed; data-talus-constraints="N GAP": the loop
// constraints drawn and the longest of their lines at that frame (m).
// URL hash options: #frame=K|last, play=0|1, speed=X, show=a,b, hide=a,b with layers visual,
// collision, contacts, frames, axes, com, follow, robots (every system's bodies); plots=INDEX|ROBOT
// (the system the plots follow: its index in the world or its robot's name; default the main one).
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { RecordedFrames, LiveFrames, indexAt } from './data.js';
import { World3D } from './world3d.js';
import { Plots } from './plots.js';
import { LiveControl } from './control.js';

const $ = (id) => document.getElementById(id);
const fail = (msg) => (window.__talusFail ? window.__talusFail(msg) : document.body.setAttribute('data-talus-error', msg));

const LAYERS = [
  ['visual', 'visual geometry', true],
  ['collision', 'collision geometry', false],
  ['contacts', 'contacts and forces', true],
  ['frames', 'joint frames', false],
  ['axes', 'joint axes and limits', false],
  ['com', 'centre of mass', false],
  ['follow', 'follow the base', false],
];

function hashOptions() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  const list = (k) => new Set((p.get(k) || '').split(',').filter(Boolean));
  return { frame: p.get('frame'), play: p.get('play'), speed: p.get('speed'), show: list('show'), hide: list('hide'),
    plots: p.get('plots') };
}

class Viewer {
  constructor(data, src, live) {
    this.data = data;
    this.src = src;
    this.live = live;
    this.opts = hashOptions();
    this.world = new World3D($('view'), data);
    this.index = 0;
    this.time = 0;
    this.playing = false;
    this.speed = Number(this.opts.speed) || 1;
    this.drawn = false;
    this.inspect = !live && src.n <= 1; // one frame: model inspection, no plots
    $('title').textContent = data.title || 'Talus';
    document.title = `${data.diverged ? 'DIVERGED: ' : ''}${data.title || 'Talus'} - Talus`;
    if (data.diverged) { // the run stopped at its last finite state: say so where it cannot be missed
      const d = document.createElement('div');
      d.id = 'diverged';
      d.textContent = `DIVERGED: ${data.diverged}`;
      d.style.cssText = 'color:#fff;background:#b00020;padding:2px 6px;margin-top:2px;font-weight:bold';
      $('title').after(d);
    }
    this.buildToggles();
    this.buildJointTable();
    this.plots = null;
    this.bindControls();
    new ResizeObserver(() => this.resize()).observe($('view'));
    this.resize();
  }

  buildToggles() {
    const single = this.inspect; // model inspection: show the structure
    // follow a base that walks away: always live, and in recordings that travel over a metre
    const defaults = { collision: single, frames: single, axes: single, follow: this.live || this.travels(1.0) };
    this.layerOn = {};
    for (const [key, label, on] of LAYERS) {
      let v = key in defaults ? defaults[key] || on : on;
      if (this.opts.show.has(key)) v = true;
      if (this.opts.hide.has(key)) v = false;
      if (key === 'axes' && !(this.data.joints || []).length) continue;
      const row = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = v;
      box.dataset.layer = key;
      box.addEventListener('change', () => this.setLayer(key, box.checked));
      row.append(box, ` ${label}`);
      $('toggles').appendChild(row);
      this.setLayer(key, v);
    }
    if (this.opts.hide.has('robots')) this.world.setRobotsVisible(false);
  }

  // Does the main system's base move more than `dist` m (horizontally) during the recording?
  travels(dist) {
    const d = this.data;
    if (d.main < 0 || this.live) return false;
    const o = d.layout.poses + 7 * d.systems[d.main].body0, f0 = this.src.frame(0);
    for (let i = 1; i < this.src.n; i++) {
      const f = this.src.frame(i);
      if (Math.hypot(f[o] - f0[o], f[o + 1] - f0[o + 1]) > dist) return true;
    }
    return false;
  }

  setLayer(key, on) {
    this.layerOn[key] = on;
    if (key === 'follow') this.world.follow = on;
    else this.world.setVisible(key, on);
    if (key === 'axes') $('joints').hidden = !on || !this.jointRows || this.inspect;
  }

  // Joint table (shown with the axes): position, limits; rows at a limit in red.
  buildJointTable() {
    const joints = (this.data.joints || []).filter((j) => j.q >= 0);
    if (!joints.length) return;
    const t = document.createElement('table');
    t.innerHTML = '<tr><th>joint</th><th>q</th><th>lower</th><th>upper</th></tr>';
    const fmt = (v) => (v == null ? '-' : v.toFixed(3));
    this.jointRows = joints.map((j) => {
      const tr = document.createElement('tr');
      tr.innerHTML = `<td></td><td></td><td>${fmt(j.lower)}</td><td>${fmt(j.upper)}</td>`;
      tr.children[0].textContent = j.name;
      t.appendChild(tr);
      return { j, tr, cell: tr.children[1] };
    });
    if (this.inspect) {
      // one frame (model inspection): the table goes where the plots would be
      const box = document.createElement('div');
      box.className = 'plot';
      box.innerHTML = '<h3>Joints: position and limits (rad, m)</h3>';
      box.appendChild(t);
      $('plots').appendChild(box);
      this.jointPanel = box;
      return;
    }
    $('joints').appendChild(t);
    $('joints').hidden = !this.layerOn.axes;
  }

  updateJointTable(f) {
    if (!this.jointRows || ($('joints').hidden && !this.inspect)) return;
    const L = this.data.layout;
    for (const r of this.jointRows) {
      const q = f[L.joint_q + r.j.q];
      r.cell.textContent = q.toFixed(3);
      const span = r.j.lower != null && r.j.upper != null ? r.j.upper - r.j.lower : Infinity;
      const near = Number.isFinite(span) && (q - r.j.lower < 0.01 * span || r.j.upper - q < 0.01 * span);
      r.tr.classList.toggle('limit', near);
    }
  }

  bindControls() {
    $('play').addEventListener('click', () => this.setPlaying(!this.playing));
    $('back').addEventListener('click', () => this.step(-1));
    $('fwd').addEventListener('click', () => this.step(1));
    $('speed').value = String(this.speed);
    $('speed').addEventListener('change', () => (this.speed = Number($('speed').value)));
    $('slider').addEventListener('input', () => {
      this.setPlaying(false);
      this.show(Number($('slider').value));
    });
    window.addEventListener('keydown', (e) => {
      if (e.target && e.target.tagName === 'INPUT' && e.target.type === 'range') return;
      if (e.key === ' ') this.setPlaying(!this.playing), e.preventDefault();
      else if (e.key === 'ArrowLeft') this.step(-1);
      else if (e.key === 'ArrowRight') this.step(1);
    });
  }

  setPlaying(on) {
    this.playing = on && (this.live || this.src.n > 1);
    $('play').innerHTML = this.playing ? '&#10074;&#10074;' : '&#9654;';
  }

  step(d) {
    this.setPlaying(false);
    this.show(Math.max(0, Math.min(this.src.n - 1, this.index + d)));
  }

  seek(t) {
    this.setPlaying(false);
    this.show(indexAt(this.src, t));
  }

  resize() {
    const v = $('view');
    this.world.resize(v.clientWidth, v.clientHeight);
    if (this.plots) this.plots.resize();
  }

  // Draw frame i (clamped).
  show(i) {
    if (this.src.n === 0) return;
    i = Math.max(0, Math.min(this.src.n - 1, i));
    this.index = i;
    this.time = this.src.time(i);
    const f = this.src.frame(i);
    if (!this.framed) this.world.setFrame(f, this.src.contactsOf(i)), this.world.frameScene(f), (this.framed = true);
    this.world.setFrame(f, this.src.contactsOf(i));
    this.updateJointTable(f);
    $('slider').max = String(this.src.n - 1);
    $('slider').value = String(i);
    $('time').textContent = `${this.time.toFixed(3)} s`;
    const nc = this.src.contactsOf(i).length / 9;
    $('status').textContent = `frame ${i + 1} / ${this.src.n}${this.live ? ' (live)' : ''}, ${nc} contact${nc === 1 ? '' : 's'}`;
    if (this.plots) this.plots.setTime(this.time);
    this.world.render();
    if (!this.drawn) {
      this.drawn = true;
      document.body.setAttribute('data-talus-constraints', this.world.constraintSummary());
      document.body.setAttribute('data-talus-frames', String(this.live ? this.src.received : this.src.n));
    }
  }

  startPlots() {
    if (this.src.n === 0 || this.plots || this.inspect) return;
    this.plots = new Plots($('plots'), this.data, this.src, (t) => this.seek(t), this.opts.plots);
    // uPlot lays its charts out asynchronously: place the cursors once it has
    requestAnimationFrame(() => this.plots && this.plots.setTime(this.time));
  }

  // The animation loop of a recording: play at `speed` x real time, loop at the end.
  run() {
    let last = performance.now();
    const tick = (now) => {
      try {
        const dt = Math.min(0.25, (now - last) / 1000);
        last = now;
        if (this.playing && this.src.n > 1) {
          const t0 = this.src.time(0), t1 = this.src.time(this.src.n - 1);
          let t = this.time + dt * this.speed;
          if (t > t1) t = t0 + ((t - t0) % Math.max(t1 - t0, 1e-9));
          this.time = t;
          const i = indexAt(this.src, t);
          if (i !== this.index) this.show(i), (this.time = t);
          else this.world.render();
        } else {
          this.world.render();
        }
      } catch (e) {
        fail(`render: ${e.message}`);
        return;
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }
}

function startRecording(el) {
  const data = JSON.parse(el.textContent);
  if (data.format !== 'talus-recording') throw new Error('not a Talus recording');
  const src = new RecordedFrames(data);
  if (src.n === 0) throw new Error('the recording has no frames');
  const v = new Viewer(data, src, false);
  v.startPlots();
  const o = v.opts;
  const start = o.frame === 'last' ? src.n - 1 : Number(o.frame) || 0;
  v.show(start);
  v.setPlaying(o.play == null ? src.n > 1 : o.play === '1');
  v.run();
}

function startLive() {
  const status = (s) => ($('status').textContent = s);
  status('connecting to the simulation...');
  const ws = new WebSocket(`ws://${location.host}/`, 'talus'); // the server's protocol name
  ws.binaryType = 'arraybuffer';
  let v = null, pending = false, lastPlot = 0, control = null;
  ws.onmessage = (e) => {
    try {
      if (typeof e.data === 'string') {
        const data = JSON.parse(e.data);
        if (v) { // after the scene: status and parameters from the simulation (the control panel)
          if (control) control.onMessage(data);
          return;
        }
        v = new Viewer(data, new LiveFrames(data.layout.floats), true);
        v.setPlaying(true);
        control = new LiveControl(v, ws); // the live page drives the simulation; recordings stay viewers
        window.__talusLive = control; // for tests (tests/test_live_control.py page)
        return;
      }
      if (!v) return;
      v.src.push(e.data);
      if (!v.plots) v.startPlots();
      if (v.playing && !pending) {
        pending = true;
        requestAnimationFrame((now) => {
          pending = false;
          if (!v.playing) return;
          v.show(v.src.n - 1);
          if (v.plots && now - lastPlot > 500) (lastPlot = now), v.plots.refresh(), v.plots.setTime(v.time);
        });
      }
    } catch (err) {
      fail(`live view: ${err.message}`);
    }
  };
  ws.onclose = () => {
    if (v && v.src.n) status(`simulation ended or stopped: ${v.src.received} frames received; frame ${v.index + 1} shown`);
    else status('no simulation at this address (it ended or was stopped)');
    if (v && v.plots) v.plots.refresh();
    if (v) v.setPlaying(false);
  };
  // paused live views can be scrubbed; a render loop keeps orbiting smooth
  const tick = () => {
    if (v) v.world.render();
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

function main() {
  try {
    const el = $('talus-data');
    if (el) startRecording(el);
    else startLive();
  } catch (e) {
    fail(`viewer: ${e.message}`);
    if (e.stack) console.log(e.stack);
    const s = $('status');
    if (s) s.textContent = `error: ${e.message}`;
  }
}

main();
