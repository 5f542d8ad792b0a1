// Frames of a recording (decoded from the page) or of the live view (from the WebSocket).
// Layout of one frame (floats, see docs/viewer.md): time, 7 per body (position, quaternion
// x y z w), 3 per system (centre of mass), kinetic and potential energy, then for the main
// system base velocity, joint coordinates, joint forces and per-body contact normal forces.
// Contacts: 9 floats each (point, unit normal, force on the system's body in N).

export const CONTACT_FLOATS = 9;

export function base64ToBuffer(s) {
  const bin = atob(s || '');
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}
export const f32 = (s) => new Float32Array(base64ToBuffer(s));
export const u32 = (s) => new Uint32Array(base64ToBuffer(s));

export class RecordedFrames {
  constructor(d) {
    this.F = d.layout.floats;
    this.frames = f32(d.frames);
    this.cstart = u32(d.contact_start);
    this.contacts = f32(d.contacts);
    this.n = d.nframe;
    if (this.frames.length !== this.n * this.F)
      throw new Error(`recording holds ${this.frames.length} floats, expected ${this.n} frames x ${this.F}`);
    if (this.cstart.length !== this.n + 1) throw new Error('recording: contact_start has the wrong length');
  }
  frame(i) { return this.frames.subarray(i * this.F, (i + 1) * this.F); }
  contactsOf(i) { return this.contacts.subarray(this.cstart[i] * CONTACT_FLOATS, this.cstart[i + 1] * CONTACT_FLOATS); }
  time(i) { return this.frames[i * this.F]; }
}

// Frames received over the WebSocket; keeps the newest `max` (about 10 min at 60 fps).
export class LiveFrames {
  constructor(F, max = 36000) {
    this.F = F;
    this.max = max;
    this.list = [];
    this.received = 0;
    this.n = 0;
  }
  push(buffer) {
    const head = new Uint32Array(buffer, 0, 2);
    const nc = head[1];
    const f = new Float32Array(buffer, 8, this.F);
    const c = new Float32Array(buffer, 8 + 4 * this.F, nc * CONTACT_FLOATS);
    this.list.push({ f, c });
    if (this.list.length > this.max + 1000) this.list.splice(0, this.list.length - this.max);
    this.n = this.list.length;
    this.received++;
  }
  frame(i) { return this.list[i].f; }
  contactsOf(i) { return this.list[i].c; }
  time(i) { return this.list[i].f[0]; }
}

// Index of the last frame whose time is <= t (frames in time order).
export function indexAt(src, t) {
  let lo = 0, hi = src.n - 1;
  if (hi < 0) return -1;
  if (t <= src.time(0)) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (src.time(mid) <= t) lo = mid; else hi = mid - 1;
  }
  return lo;
}
