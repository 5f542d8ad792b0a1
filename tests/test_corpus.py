# Guards: the whole path of a new robot: urdf/, src/cli/cli_info.c, src/cli/cli_simulate.c and
# cli_sim_*.c, controllers/, src/record/, src/cli/cli_plot.c and talus_plot.py.
"""First contact: every robot of the corpus, the way a new user tries it (issue 21, section 3).

Usage: test_corpus.py TALUS SOURCE_DIR [--jobs N] [--only SUBSTRING] [--keep DIR] [--duration S]

TALUS is the talus binary of the build under test (ctest passes $<TARGET_FILE:talus_cli>, so the
sanitizer build runs its own instrumented binary). The corpus is every *.urdf under
SOURCE_DIR/robots and SOURCE_DIR/../shared/robots (absent: said so, robots/ is still tested).

For every URDF:
  info      `talus info --json`: exit 0; every <collision> of the file is a geom of its link,
            or a load warning names its mesh file.
  runs      `talus simulate URDF --duration 2 --json --record X.html --plot X.png` with every
            controller that applies: stand (default base: fixed iff the root link is `world`);
            trot for quadrupeds (floating base, four leaf bodies at the end of chains of three
            joints, as the trot controller needs); impedance and osc for arms (at most two leaf bodies, a chain of
            four or more revolute joints; they weld the root to the world). Pass: exit 0, no
            sanitizer report on stderr, no NaN (nan_detected false, every number of the report
            finite, every float of the recorded frames finite), penetration under 1 cm after
            the first 0.1 s (max_penetration_settled_m), the recording holds duration * fps + 1
            frames, every <visual> is drawn or a warning names its file, the recording draws
            every collision geom of `talus info`, the plot is a PNG.
  pose      `talus view --pose --port 0 --record X.html`: the page is written (1 frame, the
            same visual check), the server stops on SIGINT with exit 0; where a link's visual and
            collision are the same mesh file, the collision hull's box lies within 5 mm of the
            visual mesh's (both read from the page, in the body frame). (`view --pose` serves
            until Ctrl-C: the test waits for the file, then sends SIGINT.)
The cases run on N processes at once (default 2). A table of robot x case results is printed.
Exit 0 all passed, 1 a case failed, 77 nothing could be tested.
"""
import argparse
import base64
import concurrent.futures
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

SKIP = 77
DURATION = 2.0
FPS = 60
MAX_SETTLED_PENETRATION = 0.01  # m, after the first 0.1 s
MESH_BOX_TOLERANCE = 0.005  # m: collision hull box vs visual mesh box, same mesh file
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                       r"SUMMARY: (Address|Undefined|Leak)Sanitizer")
TIMEOUT = 900  # s per command (sanitizer build)


# ---------------------------------------------------------------- the URDF, as a user reads it

def read_urdf(path):
    with open(path, "rb") as f:
        data = f.read()
    # a trailing NUL byte (shared deepmimic_humanoid) is accepted by libxml2 but not by expat
    return data.rstrip(b"\0 \r\n\t")


def urdf_geometry(path):
    """Per link: the <visual> and <collision> elements as lists of mesh file names (None: a primitive)."""
    root = ET.fromstring(read_urdf(path))
    vis, col = {}, {}
    for link in root.findall("link"):
        name = link.get("name")
        for tag, out in (("visual", vis), ("collision", col)):
            for el in link.findall(tag):
                mesh = el.find("geometry/mesh")
                out.setdefault(name, []).append(mesh.get("filename") if mesh is not None else None)
    return vis, col


def shared_meshes(path):
    """Links whose visuals and collisions are the same mesh files at the same origins and scales."""
    root = ET.fromstring(read_urdf(path))
    out = set()
    for link in root.findall("link"):
        def key(el):
            mesh = el.find("geometry/mesh")
            if mesh is None:
                return None
            o = el.find("origin")
            o = (o.get("xyz", ""), o.get("rpy", "")) if o is not None else ("", "")
            return (mesh.get("filename"), mesh.get("scale", ""), o)
        vis = sorted(map(str, (key(e) for e in link.findall("visual"))))
        col = sorted(map(str, (key(e) for e in link.findall("collision"))))
        if vis and vis == col and "None" not in vis:
            out.add(link.get("name"))
    return out


def named_in(warnings, filename):
    base = os.path.basename(filename or "")
    return bool(base) and any(base in w for w in warnings)


def geometry_problems(kind, expected, drawn, warnings):
    """Links whose `kind` elements are neither all there nor missing with a warning naming the file."""
    out = []
    for link, files in sorted(expected.items()):
        missing_named = sum(1 for f in files if f and named_in(warnings, f))
        have = drawn.get(link, 0)
        if have + missing_named < len(files):
            unnamed = [os.path.basename(f) if f else "primitive" for f in files if not (f and named_in(warnings, f))]
            out.append(f"link '{link}': {len(files)} {kind} element(s) in the URDF, {have} loaded, "
                       f"no warning names {', '.join(unnamed)}")
    return out


# ---------------------------------------------------------------- classification (talus info)

def classify(info):
    """'quadruped', 'arm' or None, from the joints of `talus info --json`."""
    joints = info["joints"]
    parent = {j["body"]: j["parent"] for j in joints}
    jtype = {j["body"]: j["type"] for j in joints}
    children = {}
    for j in joints:
        if j["parent"] is not None:
            children.setdefault(j["parent"], []).append(j["body"])
    leaves = [b for b in parent if b not in children and parent[b] is not None]

    def chain(b):
        out = []
        while parent.get(b) is not None:
            out.append(jtype[b])
            b = parent[b]
        return out

    floating = info["base"] == "floating"
    if floating and len(leaves) == 4 and all(len(chain(b)) == 3 for b in leaves):
        return "quadruped"
    revolute = max((sum(t in ("revolute", "continuous") for t in chain(b)) for b in leaves), default=0)
    if 1 <= len(leaves) <= 2 and revolute >= 4:
        return "arm"
    return None


def cases_for(kind):
    runs = [("stand", [])]
    if kind == "quadruped":
        runs.append(("trot", ["--controller", "trot"]))
    if kind == "arm":
        runs += [("impedance", ["--controller", "impedance"]), ("osc", ["--controller", "osc"])]
    return runs


# ---------------------------------------------------------------- checks

def finite_numbers(x, path="report"):
    """Paths of non-finite numbers in a parsed JSON value."""
    if isinstance(x, dict):
        return [p for k, v in x.items() for p in finite_numbers(v, f"{path}.{k}")]
    if isinstance(x, list):
        return [p for i, v in enumerate(x) for p in finite_numbers(v, f"{path}[{i}]")]
    if isinstance(x, float) and not math.isfinite(x):
        return [path]
    return []


def embedded(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script type="application/json" id="talus-data">(.*?)</script>', text, re.S)
    if not m:
        raise ValueError("no <script id=talus-data> in the page")
    return json.loads(m.group(1))


def nonfinite_floats(b64):
    a = floats(b64)
    return sum(1 for v in a if not math.isfinite(v)), len(a)


def floats(b64):
    import array
    a = array.array("f")
    a.frombytes(base64.b64decode(b64))
    return a


def rotate(q, p):
    """Rotate p by the unit quaternion q = (x, y, z, w)."""
    x, y, z, w = q
    tx, ty, tz = 2 * (y * p[2] - z * p[1]), 2 * (z * p[0] - x * p[2]), 2 * (x * p[1] - y * p[0])
    return (p[0] + w * tx + y * tz - z * ty, p[1] + w * ty + z * tx - x * tz, p[2] + w * tz + x * ty - y * tx)


def box_of(d, entries, mesh_of):
    """Axis-aligned box (body frame) of the meshes of some recording entries; None if none."""
    lo, hi = [math.inf] * 3, [-math.inf] * 3
    for e in entries:
        for m in mesh_of(e):
            a = floats(d["meshes"][m]["positions"])
            for k in range(0, len(a), 3):
                p = rotate(e["quat"], a[k:k + 3])
                for i in range(3):
                    v = p[i] + e["pos"][i]
                    lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
    return None if lo[0] == math.inf else (lo, hi)


def mesh_mismatch(d, links):
    """Links (same mesh file for visual and collision) whose collision box is off the visual's by > 5 mm."""
    out = []
    for link in sorted(links):
        vis = box_of(d, [v for v in d.get("visuals", []) if v.get("link") == link and v.get("type") == "mesh"],
                     lambda e: [p["mesh"] for p in e.get("parts", [])])
        col = box_of(d, [c for c in d.get("collisions", []) if c.get("link") == link and "mesh" in c],
                     lambda e: [e["mesh"]])
        if vis is None or col is None:
            continue
        err = max(abs(a - b) for i in (0, 1) for a, b in zip(vis[i], col[i]))
        if err > MESH_BOX_TOLERANCE:
            fmt = lambda b: "[" + ", ".join(f"{lo:.3f}..{hi:.3f}" for lo, hi in zip(*b)) + "]"  # noqa: E731
            out.append(f"link '{link}': collision mesh box {fmt(col)} is {err * 1000:.0f} mm off its visual's "
                       f"{fmt(vis)} (same file)")
    return out


def sanitizer(stderr):
    m = SANITIZER.search(stderr)
    return None if not m else stderr[max(0, m.start() - 200):m.start() + 600]


def check_recording(html, frames, vis, ninfo_geoms, problems, same_mesh=()):
    try:
        d = embedded(html)
    except (OSError, ValueError) as e:
        problems.append(f"recording {os.path.basename(html)}: {e}")
        return
    if d.get("nframe") != frames:
        problems.append(f"recording: {d.get('nframe')} frames, expected {frames}")
    bad, n = nonfinite_floats(d.get("frames", ""))
    if bad:
        problems.append(f"recording: {bad} of {n} frame floats are not finite")
    drawn = {}
    for v in d.get("visuals", []):
        drawn[v.get("link")] = drawn.get(v.get("link"), 0) + 1
    problems += geometry_problems("visual", vis, drawn, d.get("warnings", []))
    if len(d.get("collisions", [])) != ninfo_geoms:
        problems.append(f"recording draws {len(d.get('collisions', []))} collision geoms, talus info lists {ninfo_geoms}")
    problems += mesh_mismatch(d, same_mesh)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kw)


def case_info(ctx, urdf):
    """`talus info --json`; returns (problems, info or None)."""
    problems = []
    r = run([ctx.talus, "info", urdf, "--json"])
    s = sanitizer(r.stderr)
    if s:
        problems.append(f"sanitizer report:\n{s}")
    if r.returncode != 0:
        return problems + [f"info: exit {r.returncode}: {r.stderr.strip()[-400:]}"], None
    info = json.loads(r.stdout)
    vis, col = urdf_geometry(urdf)
    drawn = {}
    for g in info["geoms"]:
        drawn[g["link"]] = drawn.get(g["link"], 0) + 1
    problems += geometry_problems("collision", col, drawn, info.get("warnings", []) + [r.stderr])
    return problems, info


def case_simulate(ctx, urdf, tag, args, info):
    problems, notes = [], []
    html = os.path.join(ctx.out, f"{tag}.html")
    png = os.path.join(ctx.out, f"{tag}.png")
    cmd = [ctx.talus, "simulate", urdf, "--duration", str(ctx.duration), "--json", "--record", html,
           *(["--plot", png] if ctx.plot else []), *args]
    t0 = time.monotonic()
    r = run(cmd)
    dt = time.monotonic() - t0
    s = sanitizer(r.stderr)
    if s:
        problems.append(f"sanitizer report:\n{s}")
    if r.returncode != 0:
        problems.append(f"exit {r.returncode}: {r.stderr.strip()[-400:]}")
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        return problems + ["no JSON report on stdout"], dt, notes
    if rep.get("nan_detected") is not False:
        problems.append(f"nan_detected is {rep.get('nan_detected')}")
    problems += [f"{p} is not finite" for p in finite_numbers(rep)]
    for key in ("max_penetration_m", "max_penetration_settled_m"):
        if not isinstance(rep.get(key), (int, float)):
            problems.append(f"report: {key} is {rep.get(key)!r}")
    pen = rep.get("max_penetration_settled_m")
    pen0 = rep.get("max_penetration_m")
    if isinstance(pen, (int, float)) and isinstance(pen0, (int, float)) and not 0 <= pen <= pen0:
        problems.append(f"report: max_penetration_settled_m {pen} is not within [0, max_penetration_m {pen0}]")
    if isinstance(pen, (int, float)) and not pen < MAX_SETTLED_PENETRATION:
        problems.append(f"penetration {pen * 100:.3g} cm after the first 0.1 s (limit 1 cm; contacts: "
                        f"{', '.join(sorted(rep.get('contact_links') or {})[:6])})")
    if isinstance(pen0, (int, float)) and pen0 >= MAX_SETTLED_PENETRATION:
        notes.append(f"note: {pen0 * 100:.3g} cm deep in the first 0.1 s (the start pose)")
    for key in ("final_gc", "base_height"):
        vals = rep.get(key)
        vals = list(vals.values()) if isinstance(vals, dict) else vals or []
        if any(v is None for v in vals):
            problems.append(f"report: {key} holds null (a non-finite number)")
    vis, _ = urdf_geometry(urdf)
    frames = int(round(ctx.duration * FPS)) + 1
    if os.path.exists(html):
        check_recording(html, frames, vis, len(info["geoms"]), problems)
    else:
        problems.append("--record wrote no file")
    if not ctx.plot:
        return problems, dt, notes
    try:
        with open(png, "rb") as f:
            head = f.read(8)
        if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(png) < 5000:
            problems.append(f"--plot: {png} is not a PNG figure")
    except OSError:
        problems.append("--plot wrote no file")
    return problems, dt, notes


def case_pose(ctx, urdf, tag, info):
    problems = []
    html = os.path.join(ctx.out, f"{tag}.html")
    err_path = os.path.join(ctx.out, f"{tag}.stderr")
    t0 = time.monotonic()
    with open(err_path, "w") as err:
        p = subprocess.Popen([ctx.talus, "view", urdf, "--pose", "--port", "0", "--record", html],
                             stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + TIMEOUT
        written = False
        while time.monotonic() < deadline and p.poll() is None:
            with open(err_path) as f:
                if "talus: recorded" in f.read():
                    written = True
                    break
            time.sleep(0.1)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
            problems.append("view --pose did not stop on SIGINT")
    dt = time.monotonic() - t0
    with open(err_path) as f:
        stderr = f.read()
    s = sanitizer(stderr)
    if s:
        problems.append(f"sanitizer report:\n{s}")
    if rc != 0:
        problems.append(f"view --pose: exit {rc}: {stderr.strip()[-400:]}")
    if not written:
        problems.append("view --pose --record wrote no page")
    else:
        vis, _ = urdf_geometry(urdf)
        check_recording(html, 1, vis, len(info["geoms"]), problems, shared_meshes(urdf))
    return problems, dt, []


# ---------------------------------------------------------------- driver

class Ctx:
    pass


def corpus(source):
    found = []
    shared = os.path.normpath(os.path.join(source, "..", "shared", "robots"))
    for top in (os.path.join(source, "robots"), shared):
        if not os.path.isdir(top):
            continue
        for dirpath, dirs, files in os.walk(top):
            dirs.sort()
            found += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".urdf")]
    return found, shared


def short(urdf, source):
    p = os.path.relpath(urdf, os.path.normpath(os.path.join(source, "..")))
    return p[len("shared/robots/"):] if p.startswith("shared/robots/") else os.path.relpath(urdf, source)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("talus")
    ap.add_argument("source")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=None, help="only URDFs whose path contains this")
    ap.add_argument("--keep", default=None, help="write the recordings and plots here and keep them")
    ap.add_argument("--duration", type=float, default=DURATION)
    a = ap.parse_args()
    ctx = Ctx()
    ctx.talus = os.path.abspath(a.talus)
    ctx.duration = a.duration
    urdfs, shared = corpus(a.source)
    if not os.path.isdir(shared):
        print(f"NOTE: {shared} is absent: only the project's robots/ are tested")
    if a.only:
        urdfs = [u for u in urdfs if a.only in u]
    if not urdfs:
        print("SKIPPED: no URDF found to test")
        return SKIP
    if shutil.which(ctx.talus) is None and not os.access(ctx.talus, os.X_OK):
        print(f"FAIL: {ctx.talus} is not an executable")
        return 1
    ctx.plot = subprocess.run([sys.executable, "-c", "import matplotlib"], capture_output=True).returncode == 0
    if not ctx.plot:
        print("NOTE: matplotlib cannot be imported: --plot is left out (Debian: python3-matplotlib)")
    ctx.out = a.keep or tempfile.mkdtemp(prefix="talus-corpus-")
    os.makedirs(ctx.out, exist_ok=True)
    print(f"corpus: {len(urdfs)} URDFs, {a.jobs} processes, talus {ctx.talus}, files in {ctx.out}", flush=True)
    t_start = time.monotonic()
    results = {}  # (robot, case) -> (problems, seconds)
    names = {u: short(u, a.source) for u in urdfs}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        infos = dict(zip(urdfs, pool.map(lambda u: case_info(ctx, u), urdfs)))
        jobs = {}
        for u in urdfs:
            problems, info = infos[u]
            results[(names[u], "info")] = (problems, 0.0, [])
            if info is None:
                continue
            tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", names[u])
            kind = classify(info)
            infos[u] = (problems, info, kind)
            for case, args in cases_for(kind):
                jobs[pool.submit(case_simulate, ctx, u, f"{tag}.{case}", args, info)] = (names[u], case)
            jobs[pool.submit(case_pose, ctx, u, f"{tag}.pose", info)] = (names[u], "pose")
        for fut in concurrent.futures.as_completed(jobs):
            key = jobs[fut]
            try:
                results[key] = fut.result()
            except Exception as e:  # a crash of the test itself is a failure too
                results[key] = ([f"test error: {type(e).__name__}: {e}"], 0.0, [])
            probs, secs, notes = results[key]
            print(f"{'ok  ' if not probs else 'FAIL'}  {key[0]} {key[1]} ({secs:.1f} s)", flush=True)
            for p in probs + notes:
                print("        " + p.replace("\n", "\n        "), flush=True)
    elapsed = time.monotonic() - t_start

    # the table: one row per robot, one column per case
    cols = ["info", "stand", "trot", "impedance", "osc", "pose"]
    width = max(len(n) for n in names.values())
    print("\n" + "robot".ljust(width) + "  kind       " + "".join(c.ljust(11) for c in cols))
    failed = 0
    for u in urdfs:
        n = names[u]
        kind = infos[u][2] if len(infos[u]) == 3 else "?"
        row = n.ljust(width) + "  " + str(kind or "-").ljust(11)
        for c in cols:
            r = results.get((n, c))
            cell = "" if r is None else ("ok" if not r[0] else "FAIL")
            failed += r is not None and bool(r[0])
            row += cell.ljust(11)
        print(row)
    print(f"\ncorpus: {len(results)} cases, {failed} failed, {elapsed:.1f} s wall")
    if not a.keep:
        shutil.rmtree(ctx.out, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
