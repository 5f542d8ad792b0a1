# Guards: src/record/record_scene.c (the scene's "constraints": each loop constraint's bodies and frame
# origins) and web/src/world3d.js (setConstraints: a line between the two points, posed every frame).
"""Loop constraints in recordings (issue 23 §1: "the recorder: loops drawn as a line between the two points").

Usage: test_loop_record.py TALUS SOURCE_DIR

robots/worlds/fivebar_stand.xml (four ball constraints closing the legs of robots/talus_fivebar) recorded
for 1 s: the page's scene lists the four constraints with their bodies and points; at every recorded frame
the two ends computed from the recorded body poses (as the viewer computes them) coincide within float32
precision (the feet are closed) and lie at foot height; opened in headless Chromium the page loads every
frame with no console error and draws four lines whose ends meet (data-talus-constraints). Exit 77 (skipped) when chromium is missing.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
TALUS, SOURCE = sys.argv[1], sys.argv[2]
failures = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg, flush=True)
    if not cond:
        failures.append(msg)
    return cond


def rotate(q, p):
    """p rotated by the unit quaternion q = (x, y, z, w) (three.js order, as recorded)."""
    x, y, z, w = q
    u = np.array([x, y, z])
    return p + 2.0 * np.cross(u, np.cross(u, p) + w * p)


def main():
    tmp = tempfile.mkdtemp(prefix="talus-loop-record-")
    try:
        path = os.path.join(tmp, "fivebar.html")
        world = os.path.join(SOURCE, "robots", "worlds", "fivebar_stand.xml")
        r = subprocess.run([TALUS, "simulate", world, "--duration", "1", "--record", path, "--json"],
                           capture_output=True, text=True, timeout=300)
        if not check(r.returncode == 0, f"talus simulate --record: exit {r.returncode} {r.stderr[-300:]}"):
            return
        text = open(path, encoding="utf-8").read()
        m = re.search(r'<script type="application/json" id="talus-data">(.*?)</script>', text, re.S)
        d = json.loads(m.group(1))
        cs = d.get("constraints", [])
        check([c["name"] for c in cs] == ["foot_front_left", "foot_front_right", "foot_back_left", "foot_back_right"],
              f"the scene lists the four constraints ({[c['name'] for c in cs]})")
        bodies = d["systems"][0]["bodies"]
        check(all(c["type"] == "ball" and c["system1"] == 0 and c["system2"] == 0 and
                  bodies[c["body1"]].startswith("lower_") and bodies[c["body1"]].endswith("_a") and
                  bodies[c["body2"]].endswith("_b") and c["pos1"] == [0, 0, -0.2] and c["pos2"] == [0, 0, -0.2]
                  for c in cs), "each joins lower_LEG_a and lower_LEG_b at (0 0 -0.2)")
        L, n = d["layout"], d["nframe"]
        frames = np.frombuffer(base64.b64decode(d["frames"]), dtype=np.float32).reshape(n, L["floats"])
        check(n == 61, f"1 s at 60 fps: 61 frames ({n})")
        worst, low, high = 0.0, 1.0, 0.0
        for f in frames:
            for c in cs:
                ends = []
                for s, b, p in ((c["system1"], c["body1"], c["pos1"]), (c["system2"], c["body2"], c["pos2"])):
                    o = L["poses"] + 7 * (d["systems"][s]["body0"] + b)
                    ends.append(f[o:o + 3].astype(float) + rotate(f[o + 3:o + 7].astype(float), np.array(p, float)))
                worst = max(worst, float(np.linalg.norm(ends[0] - ends[1])))
                low, high = min(low, ends[0][2]), max(high, ends[0][2])
        check(worst < 1e-5, f"the two drawn ends coincide at every frame (largest gap {worst:.2e} m, float32)")
        check(0.015 < low and high < 0.025, f"at the feet, 0.02 m up (z in [{low:.4f}, {high:.4f}] m)")

        chromium = next((c for c in (os.environ.get("TALUS_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"))
                         if c and os.access(c, os.X_OK)), None)
        if chromium is None:
            print("SKIPPED: chromium is not installed: the page is not opened")
            sys.exit(77)
        from viewer_cdp import Browser

        b = Browser(chromium)
        try:
            got, err = b.open(f"file://{path}#frame=last&play=0", timeout=90)
            check(got == str(n) and err is None, f"the page loads {got} frames, error {err!r}")
            summary = b.evaluate("document.body.getAttribute('data-talus-constraints')") or ""
            parts = summary.split()
            check(len(parts) == 2 and parts[0] == "4" and float(parts[1]) < 1e-5,
                  f"the page draws 4 constraint lines, each closed at the last frame ({summary!r})")
            errors = [m for m in b.messages() if m[0] in ("error", "assert", "exception")]
            for m in errors:
                print(f"      console {m[0]}: {m[1][:200]}")
            check(not errors, f"no console error or exception ({len(errors)} seen)")
        finally:
            b.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
