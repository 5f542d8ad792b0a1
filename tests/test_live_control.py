# Guards: src/record/record_live.c, src/record/record_control.c (the live view's control channel),
# controllers/controller_params.c, python/src/py_viewer.c, python/talus/viewer.py, web/.
"""The live view as a control panel (issue 26), driven over its WebSocket protocol with a raw client
(the standard library only: socket, handshake, masked frames).

Usage: test_live_control.py CASE TALUS ROBOTS_DIR [PYTHON_DIR]
Cases:
  control  talus view of robots/talus_quadruped (stand): pause stops simulated time (two status
           reads 1 s apart give the same time), step n advances exactly n steps (time n dt), speed
           0.25 slows it to a quarter of real time, reset goes back to t = 0, a second
           client cannot take control while the first holds it (and can once it left), malformed,
           oversized and binary messages are dropped and counted, and a flood of them plus 50
           concurrent connections leave the simulation running at its real-time rate; a PD target
           sent as a param message reaches the joint, gain_scale 0.05 makes the robot sag; snapshot and
           restore; --bind warns.
  force    robots/box (1 kg) falling far above the ground: a force message of F for T seconds changes
           the box's momentum by F T (within 2 %), gravity's share unchanged.
  trot     robots/talus_quadruped trotting with speed 0: the forward command sent as a param message
           makes the base walk forward, yaw_rate turns it at about the rate asked, lateral walks it
           sideways.
  page     the live page in headless Chromium (DevTools protocol, tests/viewer_cdp.py): its control panel
           is built (sliders from the parameter list), its pause button pauses the simulation, and a
           Ctrl-drag on the falling box sends a spring force whose impulse over 20 steps is the box's
           momentum change (within 3 %); releasing ends it; osc's target moved by an Alt-drag.
           Skipped (77) without chromium.
  history  a client connecting to talus view of robots/talus_quadruped after 3 s of simulation first
           receives the frames of the whole 3 s (the history, default 10 s) in a burst: times strictly
           increasing at 1/fps, from t = 0 to the current time; with --history 1 only the last second.
  save     GET /recording.html after 3 s of --history 2: a self-contained recording (the page with its
           talus-data JSON) of the last 2 s of frames (count, time span, contacts), ending at the
           current time; another Host is refused (403).
  history_page  the live page opened in headless Chromium after 3 s of --history 2 holds the history in
           its frames and its plots (from about t = 1 s); the saved /recording.html opens in Chromium as
           a recording of nframe frames. Skipped (77) without chromium.
  python   talus.Viewer(world).run(controller_fn) in Python (PYTHON_DIR: the built package's folder):
           pause, step n, a push of the box (impulse F T), a slider value reaching the controller.
"""
import base64
import json
import math
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

SKIP = 77
failures = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg, flush=True)
    if not cond:
        failures.append(msg)
    return cond


class Client:
    """One WebSocket client of the live view: the scene first, then frames and status messages."""

    def __init__(self, port, read_scene=True):
        self.port = port
        self.s = socket.create_connection(("127.0.0.1", port), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                        "Sec-WebSocket-Protocol: talus\r\n\r\n").encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise EOFError("the server closed during the handshake")
            buf += chunk
        head, self.rest = buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"handshake refused: {head[:200]!r}")
        self.scene = None
        self.last_frame = None
        self.last_status = None
        self.params = None
        if read_scene:
            op, data = self.message(20)
            self.scene = json.loads(data)

    def _need(self, n, deadline):
        while len(self.rest) < n:
            self.s.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise EOFError("connection closed")
            self.rest += chunk
        out, self.rest = self.rest[:n], self.rest[n:]
        return out

    def message(self, timeout):
        """(opcode, payload) of the next whole message; socket.timeout when none came in time."""
        deadline = time.monotonic() + timeout
        data, first = b"", None
        while True:
            h = self._need(2, deadline)
            fin, op, n = h[0] >> 7, h[0] & 15, h[1] & 127
            if n == 126:
                n = struct.unpack(">H", self._need(2, deadline))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._need(8, deadline))[0]
            p = self._need(n, deadline + 10)
            first = op if first is None else first
            data += p
            if fin:
                self._note(first, data)
                return first, data

    def _note(self, op, data):
        if op == 2:
            self.last_frame = data
        elif op == 1 and self.scene is not None:
            m = json.loads(data)
            if m.get("type") == "status":
                self.last_status = m
            elif m.get("type") == "params":
                self.params = m["params"]

    def send_raw(self, payload, opcode=1):
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode())

    def ask(self, obj, timeout=10):
        """Send a message and return the status message answering it."""
        self.send(obj) if not isinstance(obj, (bytes, bytearray)) else self.send_raw(obj)
        return self.answer(timeout)

    def answer(self, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            op, data = self.message(max(0.01, deadline - time.monotonic()))
            if op == 1:
                m = json.loads(data)
                if m.get("type") == "status" and m.get("answer"):
                    return m

    def drain(self, seconds):
        """Read every message for `seconds` (keeps the newest frame and status)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self.message(end - time.monotonic())
            except (socket.timeout, TimeoutError):
                break

    def close(self):
        try:
            self.send_raw(struct.pack(">H", 1000), opcode=8)
        except OSError:
            pass
        self.s.close()


def start(args):
    p = subprocess.Popen([TALUS, *args, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    while line.startswith("talus: warning"):
        line = p.stderr.readline()
    m = re.search(r"live view at http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        p.kill()
        p.wait()
        raise RuntimeError(f"no address printed: {line!r}")
    return p, int(m.group(1))


def stop(p):
    if p.poll() is None:
        p.send_signal(2)
        try:
            p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


def frame_floats(c):
    n = len(c.last_frame) // 4
    return struct.unpack(f"<{n}f", c.last_frame)[2:]  # after the counter and the contact count (uint32)


def sim_rate(c, seconds):
    """Simulated seconds per wall second over `seconds`, from status answers."""
    t0, w0 = c.ask({"type": "status"})["time"], time.monotonic()
    time.sleep(seconds)
    t1, w1 = c.ask({"type": "status"})["time"], time.monotonic()
    return (t1 - t0) / (w1 - w0)


# ---------------------------------------------------------------- cases

def case_control():
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    p, port = start(["view", urdf])
    try:
        a = Client(port)
        dt = a.scene["timestep"]
        st = a.ask({"type": "hello"})
        time.sleep(0.3)
        st = a.ask({"type": "hello"})
        check(st["paused"] is False and st["error"] is None and st["control"] == "free" and st["controls"],
              f"hello is answered: running, nobody in control ({st['control']})")
        check(a.params is not None and any(q["name"] == "gain_scale" for q in a.params),
              f"the stand controller's parameters are listed ({len(a.params or [])})")
        # pause: simulated time stands still
        st = a.ask({"type": "pause"})
        check(st["error"] is None and st["control"] == "you", "pause is accepted; this client controls")
        time.sleep(0.2)
        s1 = a.ask({"type": "status"})
        time.sleep(1.0)
        s2 = a.ask({"type": "status"})
        check(s1["paused"] and s1["time"] == s2["time"] and s1["steps"] == s2["steps"],
              f"paused: two reads 1 s apart give the same time ({s1['time']} s, {s2['time']} s)")
        # step n: exactly n steps
        n = 37
        a.send({"type": "step", "n": n})
        a.answer()
        deadline = time.monotonic() + 10
        s3 = s2
        while time.monotonic() < deadline and s3["steps"] < s2["steps"] + n:
            time.sleep(0.05)
            s3 = a.ask({"type": "status"})
        time.sleep(0.5)
        s4 = a.ask({"type": "status"})
        check(s4["steps"] - s2["steps"] == n and abs(s4["time"] - s2["time"] - n * dt) < 1e-9 and s4["paused"],
              f"step {n}: exactly {s4['steps'] - s2['steps']} steps, {s4['time'] - s2['time']:.6f} s, still paused")
        # a second client watches and cannot take control
        b = Client(port)
        sb = b.ask({"type": "hello"})
        check(sb["control"] == "other", f"a second client sees another in control ({sb['control']})")
        sb = b.ask({"type": "run"})
        check(sb["error"] is not None and "controls" in sb["error"], f"its run is refused ({sb['error']})")
        time.sleep(0.3)
        check(a.ask({"type": "status"})["time"] == s4["time"], "the simulation stays paused")
        # malformed, oversized and binary messages: dropped and counted, answered with the reason
        bad = [b"not json", b"[1, 2]", b'{"type": 3}', b'{"type": "fly"}', b'{"type": "step", "n": -1}',
               b'{"type": "step", "n": 1.5}', b'{"type": "step", "n": 1e300}', b'{"type": "speed", "factor": 1e9}',
               b'{"type": "speed", "factor": "fast"}', b'{"type": "speed", "factor": NaN}',
               b'{"type": "force", "body": "nope", "point": [0, 0, 0], "force": [1, 0, 0], "duration": 0.1}',
               b'{"type": "force", "body": "base", "point": [0, 0], "force": [1, 0, 0], "duration": 0.1}',
               b'{"type": "force", "body": "base", "point": [0, 0, 0], "force": [1e9, 0, 0], "duration": 0.1}',
               b'{"type": "force", "body": "base", "point": [0, 0, 0], "force": [1, 0, 0], "duration": -1}',
               b'{"type": "param", "name": "gain_scale", "value": 100}',
               b'{"type": "param", "name": "no_such", "value": 1}',
               b'{"type": "step", "n": 1' + b" " * 5000 + b"}"]
        d0 = a.ask({"type": "status"})["dropped"]
        errors = []
        for m in bad:
            errors.append(b.ask(m)["error"])
        b.send_raw(b"\x00\x01\x02", opcode=2)
        errors.append(b.answer()["error"])
        d1 = a.ask({"type": "status"})["dropped"]
        check(d1 - d0 == len(bad) + 1 and all(errors),
              f"{len(bad) + 1} malformed / oversized / binary messages dropped and counted ({d1 - d0}), "
              f"each answered with why (e.g. {errors[4]!r})")
        check(a.ask({"type": "status"})["time"] == s4["time"], "none of them moved the simulation")
        # a PD target reaches the joint
        names = [q["name"] for q in a.params if q["name"].startswith("target:")]
        joint = names[0] if names else None
        q = None
        if check(joint is not None, f"per-joint PD targets are listed ({len(names)})"):
            q = next(x for x in a.params if x["name"] == joint)
            target = q["value"] + 0.3 if q["value"] + 0.3 <= q["max"] else q["value"] - 0.3
            st = a.ask({"type": "param", "name": joint, "value": target})
            check(st["error"] is None, f"param {joint} = {target:.3f} accepted")
            a.ask({"type": "step", "n": 1500})
            time.sleep(1.5)
            a.drain(0.3)
            # the joint coordinate in the frame (the scene's joints: q offsets into joint_q)
            jn = joint[len("target:"):]
            qi = next(j["q"] for j in a.scene["joints"] if j["name"] == jn)
            fl = frame_floats(a)
            got = fl[a.scene["layout"]["joint_q"] + qi]
            check(abs(got - target) < 0.05, f"the joint {jn} went to its new target ({got:.3f} vs {target:.3f} rad)")
            # a gain change reaches the PD: at 5 % of the stiffness the robot sags under its weight
            z0 = fl[a.scene["layout"]["poses"] + 2]
            st = a.ask({"type": "param", "name": "gain_scale", "value": 0.05})
            a.ask({"type": "step", "n": 1500})
            time.sleep(1.5)
            a.drain(0.3)
            z1 = frame_floats(a)[a.scene["layout"]["poses"] + 2]
            check(st["error"] is None and z1 < z0 - 0.02, f"gain_scale 0.05: the base sags ({z0:.3f} -> {z1:.3f} m)")
            a.ask({"type": "param", "name": "gain_scale", "value": 1.0})
        # run again under a flood of malformed messages and 50 more connections: the real-time rate holds
        a.ask({"type": "run"})
        flood_n = [0]

        def flood():
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                b.send_raw(b'{"type": "step", "n": "x"}')
                flood_n[0] += 1
                if flood_n[0] % 50 == 0:
                    b.drain(0.005)
        th = threading.Thread(target=flood)
        many = []
        for _ in range(50):
            try:
                many.append(Client(port, read_scene=False))
            except (OSError, EOFError, RuntimeError) as e:
                check(False, f"a connection was refused ({e})")
                break
        th.start()
        rate = sim_rate(a, 2.0)
        th.join()
        check(0.85 < rate < 1.15, f"with 50 more connections and {flood_n[0]} malformed messages in flight, "
                                  f"simulated time runs at {rate:.3f} x real time")
        for c in many:
            c.s.close()
        b.drain(0.5)
        st = a.ask({"type": "status"})
        check(p.poll() is None and st["paused"] is False and st["dropped"] >= d1 + flood_n[0] * 0.9,
              f"still running; the flood was counted ({st['dropped'] - d1} of {flood_n[0]})")
        # speed: 0.25 x real time
        a.ask({"type": "speed", "factor": 0.25})
        rate = sim_rate(a, 1.0)
        check(0.2 < rate < 0.3, f"speed 0.25: simulated time runs at {rate:.3f} x real time")
        # saved states: save at t1, run on, restore: back to t1 exactly
        a.ask({"type": "pause"})
        sv = a.ask({"type": "snapshot"})
        time.sleep(0.2)
        st = a.ask({"type": "status"})
        t_saved = st["time"]
        check(sv["error"] is None and st["snapshots"] and st["snapshots"][-1] == t_saved,
              f"snapshot: the saved state is listed at t = {t_saved} s ({st['snapshots']})")
        a.ask({"type": "step", "n": 500})
        time.sleep(0.8)
        t_on = a.ask({"type": "status"})["time"]
        a.ask({"type": "restore", "index": len(st["snapshots"]) - 1})
        time.sleep(0.3)
        st2 = a.ask({"type": "status"})
        check(abs(t_on - t_saved - 0.5) < 1e-9 and st2["time"] == t_saved and st2["steps"] == st["steps"],
              f"restore: from t = {t_on:.3f} s back to the saved t = {st2['time']} s (step {st2['steps']})")
        bad_restore = a.ask({"type": "restore", "index": 5})
        check(bad_restore["error"] is not None, f"restoring a state never saved is refused ({bad_restore['error']})")
        a.ask({"type": "run"})
        # reset: back to the initial state (time 0, steps 0), the joint target back to its start value
        a.ask({"type": "pause"})
        t_before = a.ask({"type": "status"})["time"]
        a.ask({"type": "reset"})
        time.sleep(0.3)
        st = a.ask({"type": "status"})
        a.drain(0.3)
        check(st["time"] == 0 and st["steps"] == 0 and t_before > 1,
              f"reset: from t = {t_before:.3f} s back to t = {st['time']} s, step {st['steps']}")
        if joint:
            back = next(x for x in a.params if x["name"] == joint)["value"]
            check(abs(back - q["value"]) < 1e-9, f"reset: the controller is rebuilt ({joint} = {back:.3f})")
        # once the controller leaves, another client may take control
        a.close()
        time.sleep(0.3)
        sb = b.ask({"type": "pause"})
        check(sb["error"] is None and sb["control"] == "you", f"after the first left, the second controls ({sb})")
        b.close()
    finally:
        rc = stop(p)
    check(rc == 0, f"talus view ended normally on Ctrl-C (exit {rc})")
    # talus view --pose polls nothing: its controls are refused, the status says so
    p, port = start(["view", os.path.join(ROBOTS, "pendulum", "pendulum.urdf"), "--pose"])
    try:
        c = Client(port)
        st = c.ask({"type": "hello"})
        st2 = c.ask({"type": "pause"})
        check(st["controls"] is False and st2["error"] is not None and "no controls" in st2["error"],
              f"--pose takes no controls ({st2['error']})")
        c.close()
    finally:
        stop(p)
    # --bind: a warning that the page can control the run; none on the default loopback address
    pend = os.path.join(ROBOTS, "pendulum", "pendulum.urdf")
    runs = [subprocess.run([TALUS, "simulate", pend, "--view", "--port", "0", "--duration", "0.2", "--fast", *extra],
                           capture_output=True, text=True, timeout=60) for extra in ([], ["--bind", "127.0.0.1"])]
    check(runs[0].returncode == 0 and "warning: --bind" not in runs[0].stderr and
          runs[1].returncode == 0 and "warning: --bind 127.0.0.1" in runs[1].stderr,
          f"--bind prints a warning ({runs[1].stderr.strip().splitlines()[:1]}), the default does not")


def case_force():
    urdf = os.path.join(ROBOTS, "box", "box.urdf")
    p, port = start(["view", urdf, "--base-pos", "0,0,2000", "--fps", "1000"])
    try:
        a = Client(port)
        a.ask({"type": "pause"})
        a.drain(0.3)
        lay = a.scene["layout"]
        dt = a.scene["timestep"]
        f0 = frame_floats(a)
        v0 = f0[lay["base_vel"]:lay["base_vel"] + 3]
        pos = f0[lay["poses"]:lay["poses"] + 3]
        F, T, n = 25.0, 0.1, 150
        st = a.ask({"type": "force", "body": "box", "point": list(pos), "force": [F, -0.5 * F, 0], "duration": T})
        check(st["error"] is None, f"force accepted ({st['error']})")
        a.ask({"type": "step", "n": n})
        time.sleep(1.0)
        a.drain(0.3)
        f1 = frame_floats(a)
        v1 = f1[lay["base_vel"]:lay["base_vel"] + 3]
        m = 1.0
        dpx, dpy = m * (v1[0] - v0[0]), m * (v1[1] - v0[1])
        check(abs(dpx - F * T) < 0.02 * F * T and abs(dpy + 0.5 * F * T) < 0.02 * 0.5 * F * T,
              f"momentum change ({dpx:.4f}, {dpy:.4f}) N s = F T ({F * T:.4f}, {-0.5 * F * T:.4f}) within 2 %")
        g = 9.81
        check(abs((v1[2] - v0[2]) + g * n * dt) < 0.01 * g * n * dt,
              f"vertical momentum change {v1[2] - v0[2]:.4f} N s: gravity's alone ({-g * n * dt:.4f})")
        a.close()
    finally:
        stop(p)


def case_trot():
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    p, port = start(["view", urdf, "--controller", "trot:speed=0"])
    try:
        a = Client(port)
        a.ask({"type": "hello"})
        a.drain(0.2)
        names = [q["name"] for q in a.params or []]
        check({"speed", "lateral", "yaw_rate", "gain_scale"} <= set(names), f"trot lists its commands and gain_scale ({names})")
        lay = a.scene["layout"]

        def base_x():
            a.drain(0.1)
            return frame_floats(a)[lay["poses"]], a.last_status["time"] if a.last_status else None

        time.sleep(2.0)
        x0, _ = base_x()
        t0 = a.ask({"type": "status"})["time"]
        time.sleep(1.5)
        x1, _ = base_x()
        t1 = a.ask({"type": "status"})["time"]
        v_still = (x1 - x0) / (t1 - t0)
        st = a.ask({"type": "param", "name": "speed", "value": 0.5})
        check(st["error"] is None, "param speed = 0.5 accepted")
        time.sleep(2.5)
        x2, _ = base_x()
        t2 = a.ask({"type": "status"})["time"]
        time.sleep(2.0)
        x3, _ = base_x()
        t3 = a.ask({"type": "status"})["time"]
        v_walk = (x3 - x2) / (t3 - t2)
        check(abs(v_still) < 0.1 and v_walk > 0.3,
              f"speed command 0 -> 0.5 m/s: base speed {v_still:.3f} -> {v_walk:.3f} m/s")

        def yaw():
            a.drain(0.1)
            o = lay["poses"]
            x, y, z, w = frame_floats(a)[o + 3:o + 7]
            return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))

        # turning: yaw_rate 0.6 rad/s (forward speed on) turns the heading at about that rate
        st = a.ask({"type": "param", "name": "yaw_rate", "value": 0.6})
        time.sleep(1.0)
        y0, t0 = yaw(), a.ask({"type": "status"})["time"]
        time.sleep(2.0)
        y1, t1 = yaw(), a.ask({"type": "status"})["time"]
        rate = math.remainder(y1 - y0, 2 * math.pi) / (t1 - t0)
        check(st["error"] is None and 0.4 < rate < 0.8, f"yaw_rate command 0.6 rad/s: the heading turns at {rate:.3f} rad/s")
        # sideways: lateral 0.3 m/s with no forward speed and no turning
        a.ask({"type": "param", "name": "yaw_rate", "value": 0.0})
        a.ask({"type": "param", "name": "speed", "value": 0.0})
        st = a.ask({"type": "param", "name": "lateral", "value": 0.3})
        time.sleep(2.5)
        a.drain(0.1)
        p0, h0, t0 = frame_floats(a)[lay["poses"]:lay["poses"] + 2], yaw(), a.ask({"type": "status"})["time"]
        time.sleep(2.0)
        a.drain(0.1)
        p1, t1 = frame_floats(a)[lay["poses"]:lay["poses"] + 2], a.ask({"type": "status"})["time"]
        d = [(p1[i] - p0[i]) / (t1 - t0) for i in range(2)]
        side = -math.sin(h0) * d[0] + math.cos(h0) * d[1]  # along the heading's left
        check(st["error"] is None and 0.2 < side < 0.4, f"lateral command 0.3 m/s: sideways speed {side:.3f} m/s")
        a.close()
    finally:
        stop(p)


def chromium():
    import shutil
    for c in (os.environ.get("TALUS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
              shutil.which("chromium-browser")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def case_page():
    browser_path = chromium()
    if not browser_path:
        print("SKIPPED: chromium is absent")
        sys.exit(SKIP)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from viewer_cdp import Browser

    urdf = os.path.join(ROBOTS, "box", "box.urdf")
    p, port = start(["view", urdf, "--base-pos", "0,0,2000", "--fps", "1000", "--shared-control"])
    b = Browser(browser_path)
    try:
        got, err = b.open(f"http://127.0.0.1:{port}/", timeout=60)
        check(got is not None and err is None, f"the live page draws frames (error {err})")
        b.pump(1.0)
        check(b.evaluate("!!document.getElementById('live-run') && !!document.getElementById('live-status')"),
              "the control panel is built")
        check(b.evaluate("!!document.querySelector('#live-params input[data-param=gain_scale]')"),
              "a slider for the stand controller's gain_scale, built from the parameter list")
        b.evaluate("document.getElementById('live-run').click()")
        b.pump(1.0)
        st = json.loads(b.evaluate("document.body.getAttribute('data-talus-status')") or "{}")
        check(st.get("paused") is True, f"the page's pause button paused the simulation ({st})")
        a = Client(port)
        s1 = a.ask({"type": "status"})
        check(s1["paused"], "a script sees it paused too")
        a.drain(0.2)
        lay, dt = a.scene["layout"], a.scene["timestep"]
        v0 = frame_floats(a)[lay["base_vel"]:lay["base_vel"] + 3]
        b.pump(0.3)
        x, y = b.evaluate("__talusLive.screenOf(0, 0)")
        b.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", buttons=1, clickCount=1,
               modifiers=2)
        b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x + 60, y=y - 20, button="left", buttons=1, modifiers=2)
        b.pump(0.4)
        f = b.evaluate("__talusLive.lastForce")
        F = f["force"] if f else [0, 0, 0]
        check(f is not None and f["body"] == "box" and f.get("id") == 1 and math.hypot(*F) > 1,
              f"Ctrl-drag on the box sends a spring force ({F})")
        n = 20
        a.ask({"type": "step", "n": n})
        time.sleep(0.6)
        a.drain(0.2)
        v1 = frame_floats(a)[lay["base_vel"]:lay["base_vel"] + 3]
        dp = [v1[i] - v0[i] + (9.81 * n * dt if i == 2 else 0) for i in range(3)]  # 1 kg; gravity's share out
        want = [F[i] * n * dt for i in range(3)]
        err_rel = math.dist(dp, want) / math.hypot(*want)
        check(err_rel < 0.03, f"the drag's impulse over {n} steps: momentum change {[round(v, 4) for v in dp]} "
                              f"vs F n dt {[round(v, 4) for v in want]} ({100 * err_rel:.1f} %)")
        b.call("Input.dispatchMouseEvent", type="mouseReleased", x=x + 60, y=y - 20, button="left", buttons=0,
               modifiers=2)
        b.pump(0.3)
        f = b.evaluate("__talusLive.lastForce")
        check(f is not None and math.hypot(*f["force"]) == 0, "releasing ends the pull (a zero force)")
        a.drain(0.2)
        v2 = frame_floats(a)[lay["base_vel"]:lay["base_vel"] + 3]
        a.ask({"type": "step", "n": n})
        time.sleep(0.6)
        a.drain(0.2)
        v3 = frame_floats(a)[lay["base_vel"]:lay["base_vel"] + 3]
        check(abs(v3[0] - v2[0]) < 1e-4 and abs(v3[1] - v2[1]) < 1e-4,
              f"after the release no horizontal force ({v3[0] - v2[0]:.2e}, {v3[1] - v2[1]:.2e} m/s)")
        errors = [m for m in b.messages() if m[0] in ("error", "assert", "exception")]
        check(not errors, f"no console error in the live page ({errors[:2]})")
        a.close()
    finally:
        stop(p)
    # osc: Alt-drag moves the target (the circle's centre) and the controller gets it
    arm = os.path.join(ROBOTS, "talus_base_arm", "talus_base_arm.urdf")
    p, port = start(["view", arm, "--controller", "osc"])
    try:
        got, err = b.open(f"http://127.0.0.1:{port}/", timeout=60)
        b.pump(1.0)
        keys = "['center_x','center_y','center_z'].map(k => Number(__talusLive.sliders.get(k).s.value))"
        c0 = b.evaluate(keys)
        x, y = b.evaluate("(() => { const w = __talusLive.v.world, p = __talusLive.target.position.clone().project(w.camera),"
                          " r = w.renderer.domElement.getBoundingClientRect();"
                          " return [r.left + (p.x + 1) / 2 * r.width, r.top + (1 - p.y) / 2 * r.height]; })()")
        b.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", buttons=1, clickCount=1,
               modifiers=1)
        for k in range(1, 6):
            b.call("Input.dispatchMouseEvent", type="mouseMoved", x=x + 10 * k, y=y - 6 * k, button="left", buttons=1,
                   modifiers=1)
            b.pump(0.05)
        b.call("Input.dispatchMouseEvent", type="mouseReleased", x=x + 50, y=y - 30, button="left", buttons=0, modifiers=1)
        b.pump(0.5)
        c1 = b.evaluate(keys)
        line = b.evaluate("document.getElementById('live-status').textContent")
        moved = math.dist(c0, c1) if c0 and c1 else 0
        check(b.evaluate("__talusLive.target.visible") and moved > 0.02 and "refused" not in line,
              f"osc: Alt-drag moved the target {moved:.3f} m ({c0} -> {c1}) and the controller took it ({line[:60]}...)")
    finally:
        b.close()
        stop(p)


PY_SCRIPT = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import talus
model = talus.Model.from_urdf(sys.argv[2])
world = talus.World(gravity=(0, 0, -9.81))
box = world.add_system(model)
q = box.q.copy(); q[2] = 2000.0
box.set_state(q, np.zeros(box.nv))
seen = []
viewer = talus.Viewer(world)
print(viewer.port, flush=True)
def controller(w):  # a force along z equal to the slider "lift" (N): shows the value reaches it
    box.add_external_force(0, np.array([0.0, 0.0, viewer.params.get("lift", 0.0)]))
n = viewer.run(controller, duration=4.0, params=[("lift", 0.0, 20.0, 0.0, "N")], on_param=lambda k, v: seen.append((k, v)))
print("steps", n, "params", seen, flush=True)
viewer.close()
"""


def case_python():
    if len(sys.argv) < 5 or not os.path.isdir(os.path.join(sys.argv[4], "talus")):
        print("SKIPPED: the Python package is not built (no PYTHON_DIR/talus)")
        sys.exit(SKIP)
    py = os.environ.get("TALUS_PYTHON", "/usr/bin/python3")
    p = subprocess.Popen([py, "-c", PY_SCRIPT, sys.argv[4], os.path.join(ROBOTS, "box", "box.urdf")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline())
        a = Client(port)
        st = a.ask({"type": "hello"})
        a.drain(0.2)
        check(a.params and a.params[0]["name"] == "lift", f"the script's slider is listed ({a.params})")
        a.ask({"type": "pause"})
        time.sleep(0.3)
        s1 = a.ask({"type": "status"})
        time.sleep(1.0)
        s2 = a.ask({"type": "status"})
        check(s1["paused"] and s1["time"] == s2["time"], f"paused: the time stands at {s1['time']} s")
        lay, dt = a.scene["layout"], a.scene["timestep"]
        a.drain(0.2)
        v0 = frame_floats(a)[lay["base_vel"]:lay["base_vel"] + 3]
        pos = frame_floats(a)[lay["poses"]:lay["poses"] + 3]
        F, T, n = 10.0, 0.05, 80
        a.ask({"type": "force", "body": "box", "point": list(pos), "force": [F, 0, 0], "duration": T})
        a.ask({"type": "param", "name": "lift", "value": 9.81})  # cancels gravity on the 1 kg box
        a.ask({"type": "step", "n": n})
        time.sleep(1.0)
        s3 = a.ask({"type": "status"})
        a.drain(0.3)
        v1 = frame_floats(a)[lay["base_vel"]:lay["base_vel"] + 3]
        check(s3["steps"] - s2["steps"] == n and abs(s3["time"] - s2["time"] - n * dt) < 1e-9,
              f"step {n}: {s3['steps'] - s2['steps']} steps")
        check(abs(v1[0] - v0[0] - F * T) < 0.02 * F * T, f"the push: momentum change {v1[0] - v0[0]:.4f} N s = F T {F * T}")
        check(abs(v1[2] - v0[2]) < 1e-3, f"the slider reached the controller: lift 9.81 N holds the box ({v1[2] - v0[2]:.5f} m/s)")
        a.ask({"type": "run"})
        a.close()
        out, err = p.communicate(timeout=30)
        check(p.returncode == 0 and "('lift', 9.81)" in out, f"run() returned, on_param saw the slider ({out.strip()[-120:]} {err.strip()[-300:]})")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def frame_time(data):
    return struct.unpack_from("<f", data, 8)[0]


def history_burst(port, seconds=0.5):
    """A new client's binary frames in its first `seconds` (the history, then a few live ones), and the
    simulated time of the status answering a message sent at connection."""
    c = Client(port)
    c.send({"type": "status"})
    frames, status = [], None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            op, data = c.message(end - time.monotonic())
        except (socket.timeout, TimeoutError):
            break
        if op == 2:
            frames.append(data)
        elif op == 1 and status is None:
            m = json.loads(data)
            if m.get("type") == "status":
                status = m
    c.close()
    return c, frames, status


def case_history():
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    for hist, expect_first in ((None, 0.0), (1.0, None)):
        args = ["view", urdf] + (["--history", str(hist)] if hist is not None else [])
        p, port = start(args)
        try:
            time.sleep(3.0)
            c, frames, st = history_burst(port)
            fps = c.scene["fps"]
            times = [frame_time(f) for f in frames]
            now = st["time"]
            label = f"--history {hist}" if hist is not None else "default history (10 s)"
            check(len(times) > 0, f"{label}: frames received ({len(times)})")
            if not times:
                continue
            steps = [b - a for a, b in zip(times, times[1:])]
            check(all(d > 0 for d in steps), f"{label}: times strictly increasing over {len(times)} frames")
            # the burst: frames up to the status time arrived at once, more than real time could deliver;
            # every frame of the history is there (the live frames after it may skip: a client that
            # reads slowly gets only the newest frame)
            upto = [t for t in times if t <= now + 0.5 / fps]
            hsteps = [b - a for a, b in zip(upto, upto[1:])] or [1 / fps]
            check(all(abs(d - 1 / fps) < 0.25 / fps for d in hsteps),
                  f"{label}: history spacing 1/fps ({min(hsteps):.5f} .. {max(hsteps):.5f} s, fps {fps})")
            span = upto[-1] - upto[0]
            want = now if expect_first is not None else hist
            check(abs(span - want) < 2.5 / fps,
                  f"{label}: history spans {span:.3f} s from {times[0]:.3f} to {upto[-1]:.3f} s "
                  f"(connected at t = {now:.3f} s; expected {want:.3f} s)")
            check(abs(upto[-1] - now) < 2.5 / fps, f"{label}: history ends at the current time "
                  f"({upto[-1]:.3f} vs {now:.3f} s)")
            if expect_first is not None:
                check(times[0] < 0.5 / fps, f"{label}: first frame at t = {times[0]:.4f} s (the start)")
            check(len(upto) >= round(want * fps) - 1, f"{label}: {len(upto)} frames up to t = {now:.3f} s "
                  f"(about {want * fps:.0f} expected)")
        finally:
            stop(p)


def http_get(port, path, host=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nConnection: close\r\n\r\n".encode())
    buf = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        buf += chunk
    s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    return head.decode("latin-1"), body


def case_save():
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    hist = 2.0
    p, port = start(["view", urdf, "--history", str(hist)])
    try:
        time.sleep(3.0)
        c = Client(port)
        now = c.ask({"type": "status"})["time"]
        t0 = time.monotonic()
        head, body = http_get(port, "/recording.html")
        t_get = time.monotonic() - t0
        later = c.ask({"type": "status"})["time"]
        c.close()
        status_line = head.split("\r\n")[0]
        check(" 200 " in status_line, f"GET /recording.html: {status_line} ({len(body)} bytes in {t_get:.3f} s)")
        check("attachment" in head.lower() and "talus-live.html" in head,
              "answered as a download (Content-Disposition attachment; filename talus-live.html)")
        html = body.decode("utf-8")
        check(html.lstrip().lower().startswith("<!doctype html") and html.rstrip().endswith("</html>"),
              "a whole HTML page")
        m = re.search(r'<script type="application/json" id="talus-data">(.*?)</script>', html, re.S)
        check(m is not None, "the page embeds its talus-data JSON")
        if m:
            d = json.loads(m.group(1))
            F, n = d["layout"]["floats"], d["nframe"]
            frames = base64.b64decode(d["frames"])
            cstart = struct.unpack(f"<{n + 1}I", base64.b64decode(d["contact_start"]))
            ncontact = len(base64.b64decode(d["contacts"])) // 36
            check(d["format"] == "talus-recording" and len(frames) == 4 * F * n,
                  f"a talus recording of {n} frames x {F} floats")
            times = [struct.unpack_from("<f", frames, 4 * F * k)[0] for k in range(n)]
            fps = d["fps"]
            check(all(b > a for a, b in zip(times, times[1:])), "times strictly increasing")
            span = times[-1] - times[0]
            check(abs(span - hist) < 1.5 / fps and abs(n - (hist * fps + 1)) <= 1,
                  f"the last {hist} s: {n} frames from {times[0]:.3f} to {times[-1]:.3f} s (span {span:.3f} s)")
            check(now - 1.5 / fps <= times[-1] <= later + 1.5 / fps,
                  f"ending at the current time ({times[-1]:.3f} s, status {now:.3f} .. {later:.3f} s)")
            check(cstart[0] == 0 and cstart[-1] == ncontact and d["ncontact"] == ncontact and ncontact >= 4 * n,
                  f"contacts: {ncontact} (the standing feet, {ncontact / max(n, 1):.1f} per frame)")
        head2, _ = http_get(port, "/recording.html", host="evil.example:80")
        check(" 403 " in head2.split("\r\n")[0], f"another Host refused: {head2.splitlines()[0] if head2 else '(nothing)'}")
    finally:
        stop(p)


def case_history_page():
    browser_path = chromium()
    if not browser_path:
        print("SKIPPED: chromium is absent")
        sys.exit(SKIP)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from viewer_cdp import Browser
    import tempfile

    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    p, port = start(["view", urdf, "--history", "2"])
    b = Browser(browser_path)
    try:
        time.sleep(3.0)
        got, err = b.open(f"http://127.0.0.1:{port}/", timeout=60)
        check(got is not None and err is None, f"the live page draws frames (error {err})")
        b.pump(1.0)  # the plots refresh every 0.5 s
        n, t0, t1 = b.evaluate("(() => { const s = __talusLive.v.src; return [s.n, s.time(0), s.time(s.n - 1)]; })()")
        # without the history the page would start at the time it connected, 1 s before t1
        check(n >= 2.5 * 60 and t1 - t0 > 2.5, f"a page opened after 3 s holds {n} frames from {t0:.3f} to "
              f"{t1:.3f} s (the last 2 s of history, then 1 s of live ones)")
        xs = b.evaluate("(() => { const x = __talusLive.v.plots.plots[0].data[0]; return [x.length, x[0]]; })()")
        check(xs and xs[0] >= 2 * 60 and abs(xs[1] - t0) < 1e-6,
              f"its first plot starts filled: {xs and xs[0]} points from t = {xs and xs[1]:.3f} s")
        errors = [m for m in b.messages() if m[0] in ("error", "exception")]
        check(not errors, f"no console error ({errors[:3]})")
        # the saved recording opens as a recording
        head, body = http_get(port, "/recording.html")
        m = re.search(rb'"nframe":(\d+)', body)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "talus-live.html")
            with open(path, "wb") as f:
                f.write(body)
            got, err = b.open("file://" + path, timeout=60)
        check(m is not None and got == m.group(1).decode() and err is None,
              f"the saved recording opens in Chromium: data-talus-frames {got} = nframe "
              f"{m and m.group(1).decode()} (error {err})")
    finally:
        b.close()
        stop(p)


CASES = {"history_page": case_history_page, "control": case_control, "force": case_force, "trot": case_trot, "page": case_page, "python": case_python,
         "history": case_history, "save": case_save}

if __name__ == "__main__":
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in CASES:
        print(__doc__)
        sys.exit(2)
    case, TALUS, ROBOTS = sys.argv[1], sys.argv[2], sys.argv[3]
    CASES[case]()
    print(f"{case}: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
