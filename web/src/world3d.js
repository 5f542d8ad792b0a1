// The 3D view: the recording's scene in three.js (world z up), posed frame by frame.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { toCreasedNormals } from 'three/examples/jsm/utils/BufferGeometryUtils.js';
import { f32, u32, CONTACT_FLOATS } from './data.js';

const COLLISION_COLOR = 0xff8a1f;
const CONTACT_COLOR = 0xd7263d;
const FORCE_COLOR = 0x1b998b;
const AXIS_COLOR = 0xf2b705;
const COM_COLOR = 0x7b2cbf;
const CONSTRAINT_COLOR = 0x2e86de;
const STATIC_COLOR = [0.55, 0.6, 0.68];

function srgb(c) {
  return new THREE.Color().setRGB(c[0], c[1], c[2], THREE.SRGBColorSpace);
}

function material(rgba, opts = {}) {
  const a = rgba && rgba.length > 3 && rgba[3] != null ? rgba[3] : 1;
  return new THREE.MeshStandardMaterial({
    color: srgb(rgba || [0.72, 0.72, 0.72]), roughness: 0.65, metalness: 0.05,
    transparent: a < 0.999, opacity: a, ...opts,
  });
}

function primitiveGeometry(type, size) {
  let g = null;
  if (type === 'sphere') g = new THREE.SphereGeometry(size[0], 28, 18);
  else if (type === 'box') g = new THREE.BoxGeometry(size[0], size[1], size[2]);
  else if (type === 'cylinder') {
    g = new THREE.CylinderGeometry(size[0], size[0], size[1], 28);
    g.rotateX(Math.PI / 2); // three.js cylinders run along y, Talus's along z
  } else if (type === 'capsule') {
    g = new THREE.CapsuleGeometry(size[0], size[1], 8, 20);
    g.rotateX(Math.PI / 2);
  }
  return g;
}

function setPose(obj, pos, quat) {
  obj.position.set(pos[0], pos[1], pos[2]);
  obj.quaternion.set(quat[0], quat[1], quat[2], quat[3]);
}

// Checkerboard of 1 m squares for ground planes.
function checkerTexture() {
  const c = document.createElement('canvas');
  c.width = c.height = 128;
  const g = c.getContext('2d');
  g.fillStyle = '#c9d1da';
  g.fillRect(0, 0, 128, 128);
  g.fillStyle = '#b3bdc8';
  g.fillRect(0, 0, 64, 64);
  g.fillRect(64, 64, 64, 64);
  const t = new THREE.CanvasTexture(c);
  t.wrapS = t.wrapT = THREE.RepeatWrapping;
  t.colorSpace = THREE.SRGBColorSpace;
  t.anisotropy = 4;
  return t;
}

// A triad of unit axes (x red, y green, z blue) as line segments.
function triadGeometry() {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1], 3));
  g.setAttribute('color', new THREE.Float32BufferAttribute([1, 0, 0, 1, 0, 0, 0, 0.7, 0, 0, 0.7, 0, 0, 0, 1, 0, 0, 1], 3));
  return g;
}

function perpendicular(a) {
  const v = new THREE.Vector3(...a).normalize();
  const ref = Math.abs(v.z) < 0.9 ? new THREE.Vector3(0, 0, 1) : new THREE.Vector3(1, 0, 0);
  return new THREE.Vector3().crossVectors(ref, v).normalize();
}

export class World3D {
  constructor(container, data) {
    this.data = data;
    this.L = data.layout;
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    container.prepend(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0xdfe4ea);
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 500);
    this.camera.up.set(0, 0, 1);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.enableDamping = false;
    // draw on demand only (a change of frame, camera, size or toggles): an idle page costs nothing
    this.dirty = true;
    this.controls.addEventListener('change', () => (this.dirty = true));
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x5d6670, 1.9));
    const sun = new THREE.DirectionalLight(0xffffff, 1.7);
    sun.position.set(3, -4, 8);
    this.scene.add(sun);
    this.meshCache = new Map();
    this.triad = triadGeometry();
    this.layers = { visual: [], collision: [], frames: [], axes: [], com: [], contacts: [], statics: [] };
    this.buildSystems();
    this.buildStatics();
    this.buildMarkers();
    this.lastBase = null;
    this.follow = false;
  }

  // ---- geometry
  meshGeometry(k, creased) {
    const key = `${k}:${creased}`;
    if (this.meshCache.has(key)) return this.meshCache.get(key);
    const m = this.data.meshes[k];
    let g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(f32(m.positions), 3));
    g.setIndex(new THREE.BufferAttribute(u32(m.indices), 1));
    // smooth shading across faces meeting at less than 30 degrees, sharp edges elsewhere
    g = creased ? toCreasedNormals(g, Math.PI / 6) : g.toNonIndexed();
    if (!creased) g.computeVertexNormals();
    this.meshCache.set(key, g);
    return g;
  }

  // Objects of one visual / collision geom (in its body's frame).
  geomObject(v, collision) {
    const group = new THREE.Group();
    setPose(group, v.pos, v.quat);
    if (v.type === 'mesh') {
      if (collision) {
        if (v.mesh != null) group.add(new THREE.Mesh(this.meshGeometry(v.mesh, false), this.collisionMaterial));
      } else {
        for (const p of v.parts || []) group.add(new THREE.Mesh(this.meshGeometry(p.mesh, true), material(p.color)));
      }
    } else {
      const g = primitiveGeometry(v.type, v.size);
      if (g) group.add(new THREE.Mesh(g, collision ? this.collisionMaterial : material(v.color)));
    }
    return group;
  }

  buildSystems() {
    const d = this.data;
    this.collisionMaterial = new THREE.MeshLambertMaterial({
      color: COLLISION_COLOR, transparent: true, opacity: 0.45, depthWrite: false,
    });
    this.bodies = [];
    d.systems.forEach((s) => {
      for (let b = 0; b < s.nbody; b++) {
        const body = new THREE.Group();
        body.name = s.bodies[b];
        const parts = { visual: new THREE.Group(), collision: new THREE.Group(), frames: new THREE.Group(), axes: new THREE.Group() };
        for (const [k, g] of Object.entries(parts)) {
          body.add(g);
          this.layers[k].push(g);
        }
        this.scene.add(body);
        this.bodies.push({ group: body, parts });
      }
    });
    const body = (v) => this.bodies[d.systems[v.system].body0 + v.body];
    for (const v of d.visuals) body(v).parts.visual.add(this.geomObject(v, false));
    for (const v of d.collisions) body(v).parts.collision.add(this.geomObject(v, true));
    this.robotSize = 0.5;
    for (const f of d.model_frames) {
      const t = new THREE.LineSegments(this.triad, new THREE.LineBasicMaterial({ vertexColors: true, depthTest: false }));
      t.renderOrder = 3;
      setPose(t, f.pos, f.quat);
      t.userData.frame = f.name;
      body(f).parts.frames.add(t);
    }
    this.buildJoints();
  }

  // Joint axes (arrows) and limits (arcs for revolute joints, bars for prismatic ones) of the main system.
  buildJoints() {
    const d = this.data;
    this.jointMarks = [];
    if (d.main < 0) return;
    const sys = d.systems[d.main];
    for (const j of d.joints) {
      const axis = new THREE.Vector3(...j.axis);
      if (axis.lengthSq() < 1e-12) continue;
      axis.normalize();
      const parent = this.bodies[sys.body0 + j.body].parts.axes;
      const arrow = new THREE.ArrowHelper(axis, new THREE.Vector3(), 1, AXIS_COLOR);
      arrow.line.material.depthTest = false;
      arrow.cone.material.depthTest = false;
      arrow.renderOrder = 4;
      parent.add(arrow);
      const mark = { j, axis, arrow, limit: null };
      const finite = j.lower != null && j.upper != null;
      if (j.type === 'revolute' || j.type === 'universal') {
        const e = perpendicular(j.axis), b = new THREE.Vector3().crossVectors(axis, e);
        const lim = new THREE.Group();
        const pts = [];
        if (finite) {
          const n = 48;
          for (let k = 0; k <= n; k++) {
            const th = j.lower + ((j.upper - j.lower) * k) / n;
            pts.push(e.clone().multiplyScalar(Math.cos(th)).add(b.clone().multiplyScalar(Math.sin(th))));
          }
          pts.unshift(new THREE.Vector3()), pts.push(new THREE.Vector3());
          const arc = new THREE.Line(new THREE.BufferGeometry().setFromPoints(pts),
            new THREE.LineBasicMaterial({ color: AXIS_COLOR, depthTest: false }));
          arc.renderOrder = 4;
          lim.add(arc);
        }
        // the needle: the joint's current angle (fixed in the moving body)
        const needle = new THREE.Line(new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), e.clone()]),
          new THREE.LineBasicMaterial({ color: 0x222222, depthTest: false }));
        needle.renderOrder = 5;
        parent.add(needle);
        parent.add(lim);
        mark.limit = lim;
        mark.needle = needle;
      } else if (j.type === 'prismatic' && finite) {
        const bar = new THREE.Line(new THREE.BufferGeometry().setFromPoints([
          axis.clone().multiplyScalar(j.lower), axis.clone().multiplyScalar(j.upper)]),
          new THREE.LineBasicMaterial({ color: AXIS_COLOR, depthTest: false }));
        bar.renderOrder = 4;
        parent.add(bar);
        mark.limit = bar;
      }
      this.jointMarks.push(mark);
    }
  }

  buildStatics() {
    const d = this.data;
    this.planes = [];
    for (const s of d.statics) {
      let obj = null;
      if (s.type === 'plane') {
        const tex = checkerTexture();
        obj = new THREE.Mesh(new THREE.PlaneGeometry(1, 1),
          new THREE.MeshStandardMaterial({ map: tex, roughness: 0.9, metalness: 0 }));
        this.planes.push(obj);
      } else if (s.type === 'heightmap' && s.heightmap) {
        obj = this.heightmapMesh(s.heightmap);
      } else {
        const g = primitiveGeometry(s.type, s.size);
        if (g) obj = new THREE.Mesh(g, material(STATIC_COLOR));
      }
      if (!obj) continue;
      const group = new THREE.Group();
      setPose(group, s.pos, s.quat);
      group.add(obj);
      this.scene.add(group);
      this.layers.statics.push(group);
    }
  }

  heightmapMesh(h) {
    const z = f32(h.heights), nx = h.nx, ny = h.ny;
    const pos = new Float32Array(nx * ny * 3), col = new Float32Array(nx * ny * 3);
    let lo = Infinity, hi = -Infinity;
    for (const v of z) lo = Math.min(lo, v), hi = Math.max(hi, v);
    const span = hi - lo > 1e-9 ? hi - lo : 1;
    const low = new THREE.Color(0x6f8f4e), high = new THREE.Color(0xb9a27a), c = new THREE.Color();
    for (let iy = 0; iy < ny; iy++)
      for (let ix = 0; ix < nx; ix++) {
        const k = iy * nx + ix;
        pos.set([h.x0 + ix * h.dx, h.y0 + iy * h.dy, z[k]], 3 * k);
        c.copy(low).lerp(high, (z[k] - lo) / span);
        col.set([c.r, c.g, c.b], 3 * k);
      }
    const idx = new Uint32Array((nx - 1) * (ny - 1) * 6);
    let n = 0;
    for (let iy = 0; iy + 1 < ny; iy++)
      for (let ix = 0; ix + 1 < nx; ix++) {
        const a = iy * nx + ix, b = a + 1, cc = a + nx, dd = cc + 1;
        // the engine's split: along the (ix, iy)-(ix+1, iy+1) diagonal
        idx.set([a, b, dd, a, dd, cc], n);
        n += 6;
      }
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
    g.setAttribute('color', new THREE.BufferAttribute(col, 3));
    g.setIndex(new THREE.BufferAttribute(idx, 1));
    g.computeVertexNormals();
    return new THREE.Mesh(g, new THREE.MeshStandardMaterial({ vertexColors: true, roughness: 0.95, metalness: 0 }));
  }

  // Contact points, force arrows and centres of mass.
  buildMarkers() {
    this.contactGroup = new THREE.Group();
    this.scene.add(this.contactGroup);
    this.layers.contacts.push(this.contactGroup);
    this.dotGeometry = new THREE.SphereGeometry(1, 12, 8);
    this.dotMaterial = new THREE.MeshBasicMaterial({ color: CONTACT_COLOR, depthTest: false });
    this.dots = null;
    this.arrows = [];
    this.coms = this.data.systems.map(() => {
      const m = new THREE.Mesh(this.dotGeometry, new THREE.MeshBasicMaterial({ color: COM_COLOR, depthTest: false }));
      m.renderOrder = 6;
      const line = new THREE.Line(new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), new THREE.Vector3()]),
        new THREE.LineDashedMaterial({ color: COM_COLOR, dashSize: 0.02, gapSize: 0.02, depthTest: false }));
      const g = new THREE.Group();
      g.add(m, line);
      this.scene.add(g);
      this.layers.com.push(g);
      return { dot: m, line };
    });
    // loop constraints: a line from frame 1's origin to frame 2's, posed with their bodies (contacts layer)
    this.constraints = (this.data.constraints || []).map((c) => ({
      c,
      a: c.system1 >= 0 ? this.bodies[this.data.systems[c.system1].body0 + c.body1] : null,
      b: c.system2 >= 0 ? this.bodies[this.data.systems[c.system2].body0 + c.body2] : null,
    }));
    if (this.constraints.length) {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(6 * this.constraints.length), 3));
      this.constraintLines = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: CONSTRAINT_COLOR, depthTest: false }));
      this.constraintLines.renderOrder = 5;
      this.constraintLines.frustumCulled = false;
      this.contactGroup.add(this.constraintLines);
    }
    const mass = this.data.systems.reduce((a, s) => a + (s.mass || 0), 0);
    const g = Math.hypot(...(this.data.gravity || [0, 0, -9.81])) || 9.81;
    this.weight = Math.max(mass * g, 1e-6);
  }

  // Size the scene from the first frame: camera, ground, markers.
  frameScene(frame) {
    const box = new THREE.Box3();
    for (const b of this.bodies) b.group.updateMatrixWorld(true);
    for (const b of this.bodies) box.expandByObject(b.parts.visual);
    if (box.isEmpty()) for (const b of this.bodies) box.expandByPoint(b.group.position);
    for (const g of this.layers.statics) if (!this.planes.includes(g.children[0])) box.expandByObject(g);
    if (box.isEmpty()) box.setFromCenterAndSize(new THREE.Vector3(), new THREE.Vector3(1, 1, 1));
    const robots = new THREE.Box3();
    for (const b of this.bodies) robots.expandByObject(b.parts.visual);
    const rsize = robots.isEmpty() ? 1 : robots.getSize(new THREE.Vector3()).length();
    this.robotSize = Math.max(0.2, Math.min(rsize, 5));
    const size = box.getSize(new THREE.Vector3()).length();
    const centre = (robots.isEmpty() ? box : robots).getCenter(new THREE.Vector3());
    const dist = Math.max(1.0, 1.7 * this.robotSize, 0.9 * Math.min(size, 12));
    const view = new THREE.Vector3(0.55, -1, 0.45).normalize().multiplyScalar(dist);
    this.camera.position.copy(centre).add(view);
    this.controls.target.copy(centre);
    this.camera.near = dist / 200;
    this.camera.far = dist * 200;
    this.camera.updateProjectionMatrix();
    this.controls.update();
    const ground = Math.max(20, 6 * size);
    for (const p of this.planes) {
      p.scale.set(ground, ground, 1);
      p.material.map.repeat.set(ground, ground);
    }
    const s = 0.12 * this.robotSize;
    for (const l of this.layers.frames) for (const t of l.children) t.scale.setScalar(s);
    for (const m of this.jointMarks || []) {
      m.arrow.setLength(1.5 * s, 0.3 * s, 0.15 * s);
      if (m.limit && m.j.type !== 'prismatic') m.limit.scale.setScalar(0.9 * s);
      if (m.needle) m.needle.scale.setScalar(1.1 * s);
    }
    for (const c of this.coms) c.dot.scale.setScalar(0.025 * this.robotSize);
    this.dotRadius = 0.012 * this.robotSize;
    this.forceScale = (0.8 * this.robotSize) / this.weight; // the robots' weight is 0.8 robot sizes long
    this.lastBase = null;
  }

  setVisible(layer, on) {
    for (const g of this.layers[layer] || []) g.visible = on;
    this.dirty = true;
  }

  setRobotsVisible(on) {
    for (const b of this.bodies) b.group.visible = on;
    this.dirty = true;
  }

  // Pose everything at one frame.
  setFrame(f, contacts) {
    const L = this.L;
    for (let i = 0; i < this.bodies.length; i++) {
      const o = L.poses + 7 * i, g = this.bodies[i].group;
      g.position.set(f[o], f[o + 1], f[o + 2]);
      g.quaternion.set(f[o + 3], f[o + 4], f[o + 5], f[o + 6]);
    }
    for (let s = 0; s < this.coms.length; s++) {
      const o = L.com + 3 * s, c = this.coms[s];
      c.dot.position.set(f[o], f[o + 1], f[o + 2]);
      const p = c.line.geometry.attributes.position;
      p.setXYZ(0, f[o], f[o + 1], f[o + 2]);
      p.setXYZ(1, f[o], f[o + 1], 0);
      p.needsUpdate = true;
      c.line.computeLineDistances();
    }
    if (this.data.main >= 0 && L.joint_q >= 0)
      for (const m of this.jointMarks) {
        if (m.j.q < 0 || !m.limit) continue;
        const q = f[L.joint_q + m.j.q];
        if (m.j.type === 'prismatic') m.limit.position.copy(m.axis).multiplyScalar(-q);
        else m.limit.quaternion.setFromAxisAngle(m.axis, -q);
      }
    this.setContacts(contacts);
    this.setConstraints();
    this.followBase(f);
    this.dirty = true;
  }

  followBase(f) {
    if (this.data.main < 0) return;
    const o = this.L.poses + 7 * this.data.systems[this.data.main].body0;
    const base = new THREE.Vector3(f[o], f[o + 1], f[o + 2]);
    if (this.follow && this.lastBase) {
      const d = base.clone().sub(this.lastBase);
      this.camera.position.add(d);
      this.controls.target.add(d);
      this.controls.update();
    }
    this.lastBase = base;
  }

  // World points of each constraint's two frame origins (the bodies are posed already).
  setConstraints() {
    if (!this.constraintLines) return;
    const pos = this.constraintLines.geometry.attributes.position, v = new THREE.Vector3();
    const end = (body, p, k) => {
      v.set(p[0], p[1], p[2]);
      if (body) v.applyQuaternion(body.group.quaternion).add(body.group.position);
      pos.setXYZ(k, v.x, v.y, v.z);
    };
    this.constraints.forEach((e, i) => {
      end(e.a, e.c.pos1, 2 * i);
      end(e.b, e.c.pos2, 2 * i + 1);
    });
    pos.needsUpdate = true;
  }

  // "N GAP": constraint lines drawn and the longest of them (m), for scripts (main.js).
  constraintSummary() {
    const n = this.constraints.length;
    if (!n) return '0 0';
    const p = this.constraintLines.geometry.attributes.position, a = new THREE.Vector3(), b = new THREE.Vector3();
    let gap = 0;
    for (let i = 0; i < n; i++) gap = Math.max(gap, a.fromBufferAttribute(p, 2 * i).distanceTo(b.fromBufferAttribute(p, 2 * i + 1)));
    return `${n} ${gap}`;
  }

  setContacts(c) {
    const n = c.length / CONTACT_FLOATS;
    if (!this.dots || this.dots.count < n) {
      const cap = Math.max(64, 2 * n);
      if (this.dots) this.contactGroup.remove(this.dots);
      this.dots = new THREE.InstancedMesh(this.dotGeometry, this.dotMaterial, cap);
      this.dots.renderOrder = 5;
      this.dots.frustumCulled = false;
      this.contactGroup.add(this.dots);
    }
    const m = new THREE.Matrix4(), q = new THREE.Quaternion(), s = new THREE.Vector3().setScalar(this.dotRadius || 0.01);
    for (let k = 0; k < n; k++) {
      m.compose(new THREE.Vector3(c[9 * k], c[9 * k + 1], c[9 * k + 2]), q, s);
      this.dots.setMatrixAt(k, m);
    }
    this.dots.count = n;
    this.dots.instanceMatrix.needsUpdate = true;
    while (this.arrows.length < n) {
      const a = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, FORCE_COLOR);
      a.line.material.depthTest = false;
      a.cone.material.depthTest = false;
      a.renderOrder = 5;
      this.contactGroup.add(a);
      this.arrows.push(a);
    }
    const dir = new THREE.Vector3();
    for (let k = 0; k < this.arrows.length; k++) {
      const a = this.arrows[k];
      if (k >= n) {
        a.visible = false;
        continue;
      }
      dir.set(c[9 * k + 6], c[9 * k + 7], c[9 * k + 8]);
      const len = dir.length() * (this.forceScale || 0.01);
      a.visible = len > 1e-4;
      if (!a.visible) continue;
      a.position.set(c[9 * k], c[9 * k + 1], c[9 * k + 2]);
      a.setDirection(dir.normalize());
      const head = Math.min(0.3 * len, 0.08 * this.robotSize);
      a.setLength(len, head, 0.5 * head);
    }
  }

  resize(w, h) {
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / Math.max(h, 1);
    this.camera.updateProjectionMatrix();
    this.dirty = true;
  }

  // Draw if anything changed since the last drawing (force: draw anyway).
  render(force = false) {
    if (!this.dirty && !force) return;
    this.dirty = false;
    this.renderer.render(this.scene, this.camera);
  }
}
