// The live view's control panel (issue 26): run / pause, step 1 / N, speed, reset, kick, the
// controller's parameter sliders, arrow keys for trot's speed command, Ctrl-drag on a body to pull
// it with a spring, and the simulation's status and solver statistics. Everything goes to the
// simulation as JSON text messages over the page's WebSocket (protocol: docs/viewer.md).
import * as THREE from 'three';

const SPEEDS = [['0.05', '0.05x'], ['0.1', '0.1x'], ['0.25', '0.25x'], ['0.5', '0.5x'], ['1', '1x'], ['2', '2x'],
  ['4', '4x'], ['max', 'max']];
const DRAG_STIFFNESS = 100; // 1/s^2: the spring's force per kg of the body per m of stretch
const DRAG_PERIOD_MS = 50;  // a drag force message this often, each lasting 2 periods
const KICK_DURATION = 0.02; // s

const el = (tag, attrs = {}, text) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
};
const fmt = (x, d = 3) => (x == null || !Number.isFinite(x) ? '-' : x.toFixed(d));

export class LiveControl {
  constructor(viewer, ws) {
    this.v = viewer;
    this.ws = ws;
    this.data = viewer.data;
    this.params = [];
    this.masses = [];
    this.status = null;
    this.build();
    this.bindDrag();
    this.send({ type: 'hello' });
  }

  send(msg) {
    if (msg.type === 'force') this.lastForce = msg;
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  build() {
    const box = el('div', { id: 'live' });
    this.box = box;
    const row1 = el('div', { class: 'row' });
    this.runBtn = el('button', { id: 'live-run', title: 'run / pause the simulation (space)' }, 'pause');
    this.runBtn.addEventListener('click', () => this.send({ type: this.status && this.status.paused ? 'run' : 'pause' }));
    const step1 = el('button', { id: 'live-step', title: 'one step' }, 'step');
    step1.addEventListener('click', () => this.send({ type: 'step', n: 1 }));
    this.stepN = el('input', { id: 'live-n', type: 'number', min: '1', max: '100000', value: '10', title: 'steps' });
    const stepN = el('button', { id: 'live-stepn', title: 'N steps' }, 'step N');
    stepN.addEventListener('click', () => this.send({ type: 'step', n: Math.max(1, Math.round(Number(this.stepN.value) || 1)) }));
    const reset = el('button', { id: 'live-reset', title: 'back to the initial state' }, 'reset');
    reset.addEventListener('click', () => this.send({ type: 'reset' }));
    this.speed = el('select', { id: 'live-speed', title: 'real-time factor of the simulation' });
    for (const [v, label] of SPEEDS) this.speed.append(el('option', { value: v }, label));
    this.speed.value = '1';
    this.speed.addEventListener('change', () => {
      const f = this.speed.value;
      this.send({ type: 'speed', factor: f === 'max' ? 'max' : Number(f) });
    });
    row1.append(this.runBtn, step1, this.stepN, stepN, reset, this.speed);
    const row2 = el('div', { class: 'row' });
    this.kick = el('input', { id: 'live-kick-n', type: 'number', step: '1', value: '20', title: 'impulse on the base, N s (along +x of the view)' });
    const kick = el('button', { id: 'live-kick', title: 'push the base: the impulse along the view\'s horizontal' }, 'kick');
    kick.addEventListener('click', () => this.kickBase());
    const save = el('button', { id: 'live-save', title: 'save the current state (the 8 newest are kept)' }, 'save');
    save.addEventListener('click', () => this.send({ type: 'snapshot' }));
    this.snaps = el('select', { id: 'live-snapshots', title: 'saved states (simulated time)' });
    const restore = el('button', { id: 'live-restore', title: 'restore the chosen saved state' }, 'restore');
    restore.addEventListener('click', () => {
      if (this.snaps.value !== '') this.send({ type: 'restore', index: Number(this.snaps.value) });
    });
    // the server's history (--history, default the last 10 s) as a self-contained recording, downloaded
    const record = el('a', { id: 'live-record', href: '/recording.html', download: 'talus-live.html',
      title: 'download the last seconds kept by the server (--history) as a recording' }, 'save recording');
    row2.append(kick, this.kick, el('span', {}, 'N s'), save, this.snaps, restore, record);
    this.paramBox = el('div', { id: 'live-params' });
    this.statusLine = el('div', { id: 'live-status' }, 'waiting for the simulation...');
    this.solver = el('div', { id: 'live-solver' });
    box.append(row1, row2, this.paramBox, this.statusLine, this.solver);
    document.getElementById('view').appendChild(box);
    window.addEventListener('keydown', (e) => this.key(e), true);
  }

  // Messages from the simulation: status and the parameter list.
  onMessage(m) {
    if (m.type === 'status') this.onStatus(m);
    else if (m.type === 'params') this.onParams(m);
  }

  onStatus(s) {
    this.status = s;
    this.runBtn.textContent = s.paused ? 'run' : 'pause';
    this.box.classList.toggle('nocontrols', s.controls === false); // a pose: nothing to control
    if (s.controls === false) {
      this.statusLine.textContent = 'this view takes no controls (model inspection)';
      return;
    }
    const sp = s.speed === 0 ? 'max' : String(s.speed);
    if (document.activeElement !== this.speed && [...this.speed.options].some((o) => o.value === sp)) this.speed.value = sp;
    const ctl = { you: 'you control', other: 'another page controls (watching)', free: 'nobody controls', shared: 'shared control' }[s.control] || '';
    this.statusLine.textContent = `t = ${fmt(s.time)} s, step ${s.steps}, ${s.paused ? 'PAUSED' : 'running'}` +
      `, ${s.speed === 0 ? 'as fast as possible' : `${s.speed}x asked`}, ${fmt(s.rtf, 2)}x real time; ${ctl}` +
      (s.dropped ? `; ${s.dropped} malformed dropped` : '') + (s.error ? `; refused: ${s.error}` : '');
    this.statusLine.classList.toggle('error', !!s.error);
    const snaps = (s.snapshots || []).map((t) => fmt(t)).join(',');
    if (snaps !== this.snapKey) { // the saved states, newest chosen
      this.snapKey = snaps;
      this.snaps.replaceChildren(...(s.snapshots || []).map((t, i) => el('option', { value: String(i) }, `t = ${fmt(t)} s`)));
      if (s.snapshots && s.snapshots.length) this.snaps.value = String(s.snapshots.length - 1);
    }
    const q = s.solver || {};
    this.solver.textContent = `solver: ${q.iterations} iterations, ${q.contacts} contacts, ${q.rows} rows, ` +
      `${q.converged ? 'converged' : 'NOT converged'}, Signorini ${q.signorini == null ? '-' : q.signorini.toExponential(1)}, ` +
      `cone ${q.cone == null ? '-' : q.cone.toExponential(1)}`;
    document.body.setAttribute('data-talus-status', JSON.stringify({ time: s.time, steps: s.steps, paused: s.paused }));
  }

  onParams(m) {
    this.params = m.params || [];
    this.masses = m.masses || [];
    this.paramBox.replaceChildren();
    this.sliders = new Map();
    for (const p of this.params) {
      const row = el('label', { class: 'param' });
      const name = el('span', { class: 'pname' }, p.name);
      const step = (p.max - p.min) / 200;
      const s = el('input', { type: 'range', min: String(p.min), max: String(p.max), step: String(step), value: String(p.value) });
      s.dataset.param = p.name;
      const val = el('span', { class: 'pval' }, `${fmt(p.value)} ${p.unit}`);
      s.addEventListener('input', () => {
        val.textContent = `${fmt(Number(s.value))} ${p.unit}`;
        this.send({ type: 'param', name: p.name, value: Number(s.value) });
        if (p.name.startsWith('center_')) this.placeTarget();
      });
      row.append(name, s, val);
      this.paramBox.appendChild(row);
      this.sliders.set(p.name, { s, val, p });
    }
    this.placeTarget();
  }

  // osc: the circle's centre as a sphere in the 3D view (Alt-drag moves it).
  targetParams() {
    return ['center_x', 'center_y', 'center_z'].every((k) => this.sliders && this.sliders.has(k));
  }

  placeTarget() {
    const w = this.v.world;
    if (!this.target) {
      this.target = new THREE.Mesh(new THREE.SphereGeometry(0.02, 16, 12),
        new THREE.MeshBasicMaterial({ color: 0x2060d0, depthTest: false }));
      this.target.renderOrder = 10;
      w.scene.add(this.target);
    }
    this.target.visible = this.targetParams();
    if (this.target.visible) {
      const v = (k) => Number(this.sliders.get(k).s.value);
      this.target.position.set(v('center_x'), v('center_y'), v('center_z'));
    }
    w.dirty = true;
  }

  setParam(name, value) {
    const e = this.sliders && this.sliders.get(name);
    if (!e) return;
    const v = Math.max(e.p.min, Math.min(e.p.max, value));
    e.s.value = String(v);
    e.val.textContent = `${fmt(v)} ${e.p.unit}`;
    this.send({ type: 'param', name, value: v });
    if (name.startsWith('center_')) this.placeTarget();
  }

  // Arrow keys: trot's commands (up / down: forward speed; left / right: yaw rate, with shift:
  // sideways speed); space: run / pause.
  key(e) {
    if (e.target && e.target.tagName === 'INPUT' && e.target.type !== 'range') return;
    const has = (n) => this.sliders && this.sliders.has(n);
    const bump = (n, d) => this.setParam(n, Number(this.sliders.get(n).s.value) + d);
    const arrows = { ArrowUp: ['speed', 0.1], ArrowDown: ['speed', -0.1],
      ArrowLeft: [e.shiftKey ? 'lateral' : 'yaw_rate', 0.1], ArrowRight: [e.shiftKey ? 'lateral' : 'yaw_rate', -0.1] };
    const a = arrows[e.key];
    if (a && has(a[0])) {
      bump(a[0], a[1]);
      e.preventDefault();
      e.stopPropagation();
    } else if (e.key === ' ') {
      this.send({ type: this.status && this.status.paused ? 'run' : 'pause' });
      e.preventDefault();
      e.stopPropagation();
    }
  }

  // ---- pushing bodies

  // The body (system, index, link name, mass) that a three.js object belongs to.
  bodyOf(obj) {
    const w = this.v.world;
    for (let o = obj; o; o = o.parent) {
      const k = w.bodies.findIndex((b) => b.group === o);
      if (k < 0) continue;
      const d = this.data;
      const si = d.systems.findIndex((s) => k >= s.body0 && k < s.body0 + s.nbody);
      if (si < 0) return null;
      const b = k - d.systems[si].body0;
      const mass = (this.masses[si] || [])[b];
      return { group: o, system: si, body: b, name: d.systems[si].bodies[b], mass: mass > 0 ? mass : 1 };
    }
    return null;
  }

  // Screen position (CSS pixels in the page) of a body's origin: tests drag there.
  screenOf(system, body) {
    const w = this.v.world, s = this.data.systems[system];
    const p = new THREE.Vector3();
    w.bodies[s.body0 + body].group.getWorldPosition(p);
    p.project(w.camera);
    const r = w.renderer.domElement.getBoundingClientRect();
    return [r.left + ((p.x + 1) / 2) * r.width, r.top + ((1 - p.y) / 2) * r.height];
  }

  kickBase() {
    const d = this.data, si = d.main >= 0 ? d.main : 0, s = d.systems[si];
    if (!s) return;
    const g = this.v.world.bodies[s.body0].group;
    const p = new THREE.Vector3();
    g.getWorldPosition(p);
    const dir = new THREE.Vector3();
    this.v.world.camera.getWorldDirection(dir);
    dir.z = 0;
    if (dir.lengthSq() < 1e-9) dir.set(1, 0, 0);
    dir.normalize().cross(new THREE.Vector3(0, 0, 1)).negate(); // the view's left-to-right
    const J = Number(this.kick.value) || 0;
    const F = dir.multiplyScalar(J / KICK_DURATION);
    this.send({ type: 'force', system: si, body: s.bodies[0], point: p.toArray(), force: F.toArray(), duration: KICK_DURATION });
  }

  bindDrag() {
    const w = this.v.world, canvas = w.renderer.domElement, view = document.getElementById('view');
    const ray = new THREE.Raycaster(), ndc = new THREE.Vector2();
    const at = (e) => {
      const r = canvas.getBoundingClientRect();
      ndc.set(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1);
      ray.setFromCamera(ndc, w.camera);
    };
    this.arrow = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 1, 0xd03030);
    this.arrow.visible = false;
    for (const m of [this.arrow.line.material, this.arrow.cone.material]) m.depthTest = false; // seen through the body
    this.arrow.renderOrder = 10;
    w.scene.add(this.arrow);
    let drag = null, timer = null;
    const anchor = () => drag.group.localToWorld(drag.local.clone());
    const push = (release) => {
      const p = anchor();
      const d = drag.target.clone().sub(p);
      const f = release ? new THREE.Vector3() : d.clone().multiplyScalar(DRAG_STIFFNESS * drag.mass);
      const len = d.length();
      this.arrow.visible = !release && len > 1e-4;
      if (this.arrow.visible) this.arrow.position.copy(p), this.arrow.setDirection(d.clone().normalize()), this.arrow.setLength(len, Math.min(0.1, len / 3), Math.min(0.06, len / 5));
      w.dirty = true;
      if (f.length() > 1e5) f.setLength(1e5);
      this.send({ type: 'force', id: 1, system: drag.system, body: drag.name, point: p.toArray(), force: f.toArray(),
        duration: release ? 1e-6 : (2 * DRAG_PERIOD_MS) / 1000 });
    };
    // Alt-drag: osc's target (the circle's centre) moves in the plane facing the camera
    let moving = null;
    view.addEventListener('pointerdown', (e) => {
      if (!e.altKey || e.button !== 0 || !this.targetParams()) return;
      moving = new THREE.Plane().setFromNormalAndCoplanarPoint(w.camera.getWorldDirection(new THREE.Vector3()),
        this.target.position);
      w.controls.enabled = false;
      e.preventDefault();
      e.stopPropagation();
    }, true);
    window.addEventListener('pointermove', (e) => {
      if (!moving) return;
      at(e);
      const p = new THREE.Vector3();
      if (!ray.ray.intersectPlane(moving, p)) return;
      const now = performance.now();
      if (now - (this.lastMove || 0) < 30) return; // at most ~30 param messages a second per axis
      this.lastMove = now;
      this.setParam('center_x', p.x), this.setParam('center_y', p.y), this.setParam('center_z', p.z);
    });
    window.addEventListener('pointerup', () => {
      if (!moving) return;
      moving = null;
      w.controls.enabled = true;
    });
    view.addEventListener('pointerdown', (e) => {
      if (!e.ctrlKey || e.button !== 0) return;
      at(e);
      const meshes = [];
      w.scene.traverseVisible((o) => o.isMesh && o !== this.arrow.cone && o.parent !== this.arrow && meshes.push(o));
      const hit = ray.intersectObjects(meshes, false).find((h) => this.bodyOf(h.object));
      if (!hit) return;
      const b = this.bodyOf(hit.object);
      drag = { ...b, local: b.group.worldToLocal(hit.point.clone()), target: hit.point.clone(),
        plane: new THREE.Plane().setFromNormalAndCoplanarPoint(w.camera.getWorldDirection(new THREE.Vector3()), hit.point) };
      w.controls.enabled = false;
      e.preventDefault();
      e.stopPropagation();
      push(false);
      timer = setInterval(() => drag && push(false), DRAG_PERIOD_MS);
    }, true);
    window.addEventListener('pointermove', (e) => {
      if (!drag) return;
      at(e);
      const p = new THREE.Vector3();
      if (ray.ray.intersectPlane(drag.plane, p)) drag.target.copy(p);
    });
    window.addEventListener('pointerup', () => {
      if (!drag) return;
      push(true);
      clearInterval(timer);
      drag = null;
      this.arrow.visible = false;
      w.controls.enabled = true;
      w.dirty = true;
    });
  }
}
