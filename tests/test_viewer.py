# Guards: src/record/ (recorder.c, record_scene.c, record_write.c, record_live.c), web/ (the page),
# src/cli/cli_plot.c and talus_plot.py (--plot, --csv).
"""The viewer end to end: recordings opened in headless Chromium, the live view, --plot, bad paths.

Usage: test_viewer.py CASE TALUS ROBOTS_DIR SHARED_ROBOTS_DIR
Cases:
  quadruped  robots/talus_quadruped (primitive geometry) standing 2 s
  anymal     ANYmal C (DAE meshes, ../shared) trotting 10 s at 60 fps: the file is at most 15 MB
  world      robots/worlds/terrain_and_objects.xml (heightmap, static and dynamic objects)
  pose       one-frame recording of ANYmal C (model inspection: frames, collision, axes, limits)
  live       the live view: WebSocket clients come and go while the simulation runs on
  plot       --plot PNG and SVG, --csv
  badpath    an output path that cannot be written fails at once, before any simulation
  origin     the live view answers only its own Host values (403 for another name: DNS rebinding)
             and WebSockets from its own page or with no Origin (another site's page refused)

Browser checks (DevTools protocol, tests/viewer_cdp.py): <body data-talus-frames> reaches the
number of recorded frames, no data-talus-error, no console error or exception, and the robot is
really drawn: a screenshot of the page differs from one with the robots hidden (#hide=robots) in
at least MIN_ROBOT_FRACTION of the 3D view's pixels, and the view is not uniform.
Exit 77 (skipped) when chromium, ../shared or matplotlib is missing, saying which.
"""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SKIP = 77
MIN_ROBOT_FRACTION = 0.005  # of the 3D view's pixels
MAX_ANYMAL_BYTES = 15 * 1000 * 1000
failures = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg, flush=True)
    if not cond:
        failures.append(msg)
    return cond


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def chromium():
    for c in (os.environ.get("TALUS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
              shutil.which("chromium-browser")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def talus(args, timeout=300, **kw):
    return subprocess.run([TALUS, *args], capture_output=True, text=True, timeout=timeout, **kw)


def record(args, path, frames_expected=None):
    r = talus(["simulate", *args, "--record", path, "--json"])
    check(r.returncode == 0, f"talus simulate {' '.join(args)} --record: exit {r.returncode} {r.stderr.strip()[-300:]}")
    if r.returncode != 0:
        return None
    size = os.path.getsize(path)
    print(f"      recording {path}: {size} bytes ({size / 1e6:.2f} MB)")
    return json.loads(r.stdout)


def embedded_json(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="talus-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1)) if m else None


# ---------------------------------------------------------------- images

def load_png(path):
    from PIL import Image  # python3-pil (Debian), a dependency of python3-matplotlib

    return Image.open(path).convert("RGB")


def view_box(browser):
    r = browser.evaluate("(() => { const c = document.querySelector('#view canvas').getBoundingClientRect();"
                         " return [c.left, c.top, c.right, c.bottom].map(Math.round); })()")
    return tuple(r)


def robot_pixels(with_robot, without_robot, box):
    """Fraction of the 3D view's pixels that change when the robots are hidden, and the view's std dev."""
    from PIL import ImageChops, ImageStat

    a, b = with_robot.crop(box), without_robot.crop(box)
    diff = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 24 else 0)
    changed = ImageStat.Stat(diff).mean[0] / 255.0
    spread = max(ImageStat.Stat(a).stddev)
    return changed, spread


def browse_recording(path, frames, hash_frame):
    """Open the recording, check readiness and console, compare screenshots with and without robots."""
    from viewer_cdp import Browser

    tmp = tempfile.mkdtemp(prefix="talus-viewer-")
    b = Browser(CHROMIUM)
    try:
        url = f"file://{os.path.abspath(path)}#frame={hash_frame}&play=0"
        got, err = b.open(url, timeout=90)
        check(got == str(frames), f"data-talus-frames = {got} (expected {frames})")
        check(err is None, f"no data-talus-error (got {err!r})")
        shot_a, shot_b = os.path.join(tmp, "robot.png"), os.path.join(tmp, "empty.png")
        b.screenshot(shot_a)
        box = view_box(b)
        got2, err2 = b.open(url + "&hide=robots", timeout=90)
        check(got2 == str(frames) and err2 is None, "the page with the robots hidden loads too")
        b.screenshot(shot_b)
        changed, spread = robot_pixels(load_png(shot_a), load_png(shot_b), box)
        check(spread > 5, f"the 3D view is not uniform (std dev {spread:.1f})")
        check(changed >= MIN_ROBOT_FRACTION,
              f"the robots cover {100 * changed:.2f}% of the 3D view (at least {100 * MIN_ROBOT_FRACTION:.1f}%)")
        errors = [m for m in b.messages() if m[0] in ("error", "assert", "exception")]
        for m in b.messages():
            print(f"      console {m[0]}: {m[1][:200]}")
        check(not errors, f"no console error or exception ({len(errors)} seen)")
        keep = os.environ.get("TALUS_TEST_KEEP")
        if keep:
            shutil.copy(shot_a, os.path.join(keep, os.path.basename(path) + ".png"))
    finally:
        b.close()
        shutil.rmtree(tmp, ignore_errors=True)


def need_browser():
    if CHROMIUM is None:
        skip("chromium is not installed (scripts/setup.sh installs Debian's chromium)")


# ---------------------------------------------------------------- recordings

def case_quadruped(tmp):
    need_browser()
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    path = os.path.join(tmp, "quadruped.html")
    rep = record([urdf, "--duration", "2"], path)
    if rep is None:
        return
    d = embedded_json(path)
    check(d is not None and d["nframe"] == 121, f"2 s at 60 fps: 121 frames (got {d and d['nframe']})")
    check(d["main"] == 0 and len(d["plots"]["joint_q"]) == 12, "the plots follow the quadruped's 12 joints")
    browse_recording(path, 121, 60)


def case_anymal(tmp):
    need_browser()
    urdf = os.path.join(SHARED, "anymal_c", "urdf", "anymal.urdf")
    if not os.path.exists(urdf):
        skip(f"{urdf} is absent (../shared robots)")
    path = os.path.join(tmp, "anymal.html")
    rep = record([urdf, "--controller", "trot", "--duration", "10", "--fps", "60"], path)
    if rep is None:
        return
    size = os.path.getsize(path)
    check(size <= MAX_ANYMAL_BYTES, f"10 s ANYmal C trot with meshes at 60 fps: {size / 1e6:.2f} MB <= 15 MB")
    d = embedded_json(path)
    check(d["nframe"] == 601, f"601 frames (got {d['nframe']})")
    nparts = sum(len(v.get("parts", [])) for v in d["visuals"])
    check(nparts >= 20 and len(d["meshes"]) >= 15, f"mesh visuals: {nparts} parts, {len(d['meshes'])} meshes")
    check(not d["warnings"], f"no warnings reading the meshes ({d['warnings'][:2]})")
    check(rep["base_velocity_mean"][0] > 0.3, f"it trots forward ({rep['base_velocity_mean'][0]:.2f} m/s)")
    browse_recording(path, 601, 300)


def case_world(tmp):
    need_browser()
    world = os.path.join(ROBOTS, "worlds", "terrain_and_objects.xml")
    path = os.path.join(tmp, "world.html")
    rep = record([world, "--duration", "2"], path)
    if rep is None:
        return
    d = embedded_json(path)
    types = sorted(s["type"] for s in d["statics"])
    check("heightmap" in types and types.count("box") == 2 and "cylinder" in types,
          f"statics: heightmap, 2 boxes, a cylinder ({types})")
    hm = [s for s in d["statics"] if s["type"] == "heightmap"][0]["heightmap"]
    check(hm["nx"] == 101 and hm["ny"] == 101, "the 101 x 101 heightmap")
    check(len(d["systems"]) == 4, f"3 objects and the quadruped ({len(d['systems'])} systems)")
    check(d["title"] == "terrain_and_objects", f"titled after the world ({d['title']})")
    browse_recording(path, 121, "last")


def case_pose(tmp):
    need_browser()
    urdf = os.path.join(SHARED, "anymal_c", "urdf", "anymal.urdf")
    if not os.path.exists(urdf):
        skip(f"{urdf} is absent (../shared robots)")
    path = os.path.join(tmp, "pose.html")
    if record([urdf, "--duration", "0"], path) is None:
        return
    d = embedded_json(path)
    check(d["nframe"] == 1, "one frame")
    revolute = [j for j in d["joints"] if j["type"] == "revolute"]
    check(len(revolute) == 12 and all(abs(sum(a * a for a in j["axis"]) - 1) < 1e-9 for j in revolute),
          "12 revolute joints with unit axes")
    haa = [j for j in revolute if j["name"] == "LF_HAA"][0]
    check(abs(abs(haa["axis"][0]) - 1) < 1e-9, f"LF_HAA turns about the base x axis ({haa['axis']})")
    check(haa["lower"] == -0.72 and haa["upper"] == 0.49, f"LF_HAA limits [-0.72, 0.49] ({haa['lower']}, {haa['upper']})")
    check(len(d["model_frames"]) > 13, f"joint frames ({len(d['model_frames'])})")
    check(len(d["collisions"]) >= 13, f"collision geoms ({len(d['collisions'])})")
    browse_recording(path, 1, 0)


# ---------------------------------------------------------------- live view

def ws_connect(port, host=None, origin=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    host = host or f"127.0.0.1:{port}"
    extra = f"Origin: {origin}\r\n" if origin else ""
    s.sendall((f"GET / HTTP/1.1\r\nHost: {host}\r\n{extra}Upgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: talus\r\n\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            s.close()
            raise EOFError("the server closed during the handshake")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    if b" 101 " not in head.split(b"\r\n")[0]:
        raise RuntimeError(f"handshake refused: {head[:200]!r}")
    return s, rest


def ws_message(s, rest):
    def need(n, rest):
        while len(rest) < n:
            chunk = s.recv(1 << 16)
            if not chunk:
                raise EOFError("connection closed")
            rest += chunk
        return rest[:n], rest[n:]

    data, first_op = b"", None
    while True:
        h, rest = need(2, rest)
        fin, op, n = h[0] >> 7, h[0] & 15, h[1] & 127
        if n == 126:
            b, rest = need(2, rest)
            n = struct.unpack(">H", b)[0]
        elif n == 127:
            b, rest = need(8, rest)
            n = struct.unpack(">Q", b)[0]
        p, rest = need(n, rest)
        first_op = op if first_op is None else first_op
        data += p
        if fin:
            return first_op, data, rest


def ws_close(s):
    # a masked close frame, status 1000
    s.sendall(bytes([0x88, 0x82, 1, 2, 3, 4]) + bytes(a ^ b for a, b in zip(struct.pack(">H", 1000), [1, 2])))
    s.close()


def read_frames(s, rest, floats, n):
    times = []
    for _ in range(n):
        op, data, rest = ws_message(s, rest)
        if op != 2:
            check(False, f"a frame is a binary message (opcode {op})")
        seq, nc = struct.unpack("<II", data[:8])
        if len(data) != 8 + 4 * (floats + 9 * nc):
            check(False, f"frame of {len(data)} bytes for {floats} floats and {nc} contacts")
        times.append(struct.unpack("<f", data[8:12])[0])
    return times, rest


def http_get(port, host):
    """The status line of GET / sent with this Host header (b"" if the server just closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as h:
        h.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        got = b""
        while b"\r\n" not in got:
            chunk = h.recv(4096)
            if not chunk:
                break
            got += chunk
    return got.split(b"\r\n", 1)[0]


def ws_accepted(port, host=None, origin=None):
    try:
        s, _ = ws_connect(port, host, origin)
    except (EOFError, RuntimeError, ConnectionError):
        return False
    ws_close(s)
    return True


def case_origin(tmp):
    """Issue 21: only this server's Host values and its own page's Origin (or none) are served: a page
    of another site (cross-site WebSocket hijacking) or a rebound DNS name gets nothing."""
    urdf = os.path.join(ROBOTS, "pendulum", "pendulum.urdf")
    p = subprocess.Popen([TALUS, "view", urdf, "--port", "0", "--pose"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r"live view at http://127\.0\.0\.1:(\d+)/", line)
        if not check(m is not None, f"the address is printed on stderr ({line.strip()!r})"):
            return
        port = int(m.group(1))
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
            st = http_get(port, host)
            check(st.startswith(b"HTTP/1.1 200"), f"GET / with Host {host} is served ({st!r})")
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", f"127.0.0.1.evil.example:{port}"):
            st = http_get(port, host)
            check(not st.startswith(b"HTTP/1.1 200") and (st == b"" or b"403" in st),
                  f"GET / with Host {host} (DNS rebinding) is refused ({st!r})")
        check(ws_accepted(port), "a WebSocket without Origin (not a browser) is accepted")
        check(ws_accepted(port, origin=f"http://127.0.0.1:{port}"), "a WebSocket from the page itself is accepted")
        check(ws_accepted(port, host=f"localhost:{port}", origin=f"http://localhost:{port}"),
              "a WebSocket from the page at localhost is accepted")
        check(not ws_accepted(port, origin="http://evil.example"),
              "a WebSocket from another site's page (Origin http://evil.example) is refused")
        check(not ws_accepted(port, origin=f"http://evil.example:{port}"),
              "a WebSocket with Origin http://evil.example:PORT is refused")
        check(not ws_accepted(port, origin="null"), "a WebSocket with Origin null (a file: page) is refused")
        check(not ws_accepted(port, host=f"evil.example:{port}", origin=f"http://evil.example:{port}"),
              "a WebSocket through a rebound DNS name (Host and Origin evil.example) is refused")
    finally:
        p.send_signal(2)
        try:
            p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def case_live(tmp):
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    duration = 4.0
    p = subprocess.Popen([TALUS, "simulate", urdf, "--view", "--port", "0", "--duration", str(duration), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r"live view at http://127\.0\.0\.1:(\d+)/", line)
        if not check(m is not None, f"the address is printed on stderr ({line.strip()!r})"):
            return
        port = int(m.group(1))
        # the page over HTTP: the viewer without recorded data
        with socket.create_connection(("127.0.0.1", port), timeout=20) as h:
            h.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            page = b""
            while True:
                chunk = h.recv(1 << 16)
                if not chunk:
                    break
                page += chunk
        check(page.startswith(b"HTTP/1.1 200") and b"data-talus" in page and b'id="talus-data"' not in page,
              f"GET / serves the live page ({len(page)} bytes)")
        # client 1: the scene, then frames in time order; then it vanishes without a close frame
        s, rest = ws_connect(port)
        op, data, rest = ws_message(s, rest)
        scene = json.loads(data)
        check(op == 1 and scene["format"] == "talus-recording", "the first message is the scene (text, JSON)")
        floats = scene["layout"]["floats"]
        t1, rest = read_frames(s, rest, floats, 20)
        check(all(b > a for a, b in zip(t1, t1[1:])), f"20 frames, time increasing ({t1[0]:.3f} .. {t1[-1]:.3f} s)")
        s.shutdown(socket.SHUT_RDWR)
        s.close()
        time.sleep(0.5)
        # client 2: the simulation went on without anyone watching
        s, rest = ws_connect(port)
        _, _, rest = ws_message(s, rest)  # the scene
        # first the history (issue 26: the frames since the start, at most the last 10 s), then live ones
        t2 = []
        while len(t2) < 600 and (not t2 or t2[-1] <= t1[-1] + 0.3):
            t, rest = read_frames(s, rest, floats, 1)
            t2 += t
        check(t2[0] == 0 and all(b > a for a, b in zip(t2, t2[1:])),
              f"a new client gets the history first: {len(t2)} frames from {t2[0]:.3f} s, time increasing")
        check(t2[-1] > t1[-1] + 0.3, f"after a browser left, the simulation went on ({t1[-1]:.3f} -> {t2[-1]:.3f} s)")
        ws_close(s)
        if CHROMIUM:
            from viewer_cdp import Browser

            b = Browser(CHROMIUM)
            try:
                got, err = b.open(f"http://127.0.0.1:{port}/", timeout=60)
                check(got is not None and int(got) >= 1 and err is None,
                      f"the live page in Chromium draws frames (data-talus-frames {got}, error {err})")
                errors = [m for m in b.messages() if m[0] in ("error", "assert", "exception")]
                check(not errors, f"no console error in the live page ({errors[:2]})")
            finally:
                b.close()
        else:
            print("      (chromium absent: the live page was not opened in a browser)")
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(p.returncode == 0, f"the simulation ended normally (exit {p.returncode}) {err.strip()[-300:]}")
    if p.returncode == 0:
        rep = json.loads(out)
        check(rep["steps"] == 4000 and abs(rep["sim_time_s"] - duration) < 1e-9,
              f"all {rep['steps']} steps were simulated")
        check(rep["wall_time_s"] > 0.9 * duration, f"in real time ({rep['wall_time_s']:.2f} s of wall time)")


# ---------------------------------------------------------------- plots, bad paths

def case_plot(tmp):
    py = os.environ.get("TALUS_PYTHON", "/usr/bin/python3")
    if subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        skip(f"{py} has no matplotlib (Debian: python3-matplotlib)")
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    png, svg, csv = (os.path.join(tmp, f"run.{e}") for e in ("png", "svg", "csv"))
    r = talus(["simulate", urdf, "--duration", "1", "--plot", png, "--csv", csv])
    check(r.returncode == 0, f"--plot PNG --csv: exit {r.returncode} {r.stderr.strip()[-300:]}")
    r2 = talus(["simulate", urdf, "--duration", "1", "--plot", svg])
    check(r2.returncode == 0, f"--plot SVG: exit {r2.returncode} {r2.stderr.strip()[-300:]}")
    if r.returncode == 0:
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the PNG has a PNG signature")
        from PIL import ImageStat

        img = load_png(png)
        check(img.size[0] >= 600 and img.size[1] >= 600, f"PNG of {img.size[0]} x {img.size[1]} pixels")
        check(max(ImageStat.Stat(img).stddev) > 10, "the PNG is not blank")
        rows = open(csv).read().strip().split("\n")
        head = rows[0].split(",")
        check(len(rows) == 62 and all(len(x.split(",")) == len(head) for x in rows),
              f"CSV: a header and 61 rows of {len(head)} columns (got {len(rows)} lines)")
        fn = sum(float(rows[-1].split(",")[k]) for k, n in enumerate(head) if n.startswith("fn_"))
        check(fn > 0, f"contact normal forces in the CSV (sum {fn:.1f} N)")
    if r2.returncode == 0:
        root = ET.parse(svg).getroot()
        check(root.tag.endswith("svg"), "the SVG parses as SVG")
        text = open(svg).read()
        check("base height" in text and "energy" in text, "the SVG holds the base height and energy panels")


def case_badpath(tmp):
    urdf = os.path.join(ROBOTS, "talus_quadruped", "talus_quadruped.urdf")
    missing = os.path.join(tmp, "no_such_folder", "run.html")
    t0 = time.monotonic()
    r = talus(["simulate", urdf, "--duration", "100000", "--record", missing], timeout=60)
    dt = time.monotonic() - t0
    check(r.returncode == 1, f"--record into a missing folder: exit 1 (got {r.returncode})")
    check(missing in r.stderr and "does not exist" in r.stderr, f"the message names the path and why: {r.stderr.strip()!r}")
    check(r.stdout == "" and dt < 20, f"before any simulation (no report, {dt:.2f} s; the run asked for 1e5 s)")
    folder = os.path.join(tmp, "a_folder.html")
    os.mkdir(folder)
    r = talus(["simulate", urdf, "--duration", "100000", "--record", folder], timeout=60)
    check(r.returncode == 1 and "is a folder" in r.stderr and r.stdout == "", f"--record FOLDER: {r.stderr.strip()!r}")
    r = talus(["simulate", urdf, "--duration", "100000", "--csv", missing.replace(".html", ".csv")], timeout=60)
    check(r.returncode == 1 and "does not exist" in r.stderr and r.stdout == "", f"--csv: {r.stderr.strip()!r}")
    r = talus(["simulate", urdf, "--record", os.path.join(tmp, "run.txt")], timeout=60)
    check(r.returncode == 2 and ".html" in r.stderr, f"--record without .html: usage error ({r.stderr.strip()!r})")
    r = talus(["simulate", urdf, "--plot", os.path.join(tmp, "run.jpg")], timeout=60)
    check(r.returncode == 2 and ".png" in r.stderr, f"--plot of an unknown format: usage error ({r.stderr.strip()!r})")
    check(not [f for f in os.listdir(tmp) if f.startswith(".talus-probe")], "no probe file left behind")


CASES = {"quadruped": case_quadruped, "anymal": case_anymal, "world": case_world, "pose": case_pose,
         "live": case_live, "plot": case_plot, "badpath": case_badpath, "origin": case_origin}

if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in CASES:
        print(__doc__)
        sys.exit(2)
    case, TALUS, ROBOTS, SHARED = sys.argv[1:]
    CHROMIUM = chromium()
    tmp = tempfile.mkdtemp(prefix=f"talus-test-{case}-")
    try:
        CASES[case](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{case}: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
