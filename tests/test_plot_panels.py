# Guards: web/ (the recording's plot panels), src/cli/talus_plot.py, src/cli/cli_plot.c (--plot,
# --plot-system), src/record/recorder.c (series of every system).
"""Plot panels of recordings and --plot (issue 21, section 5): which panels, many series, which system.

Usage: test_plot_panels.py CASE TALUS SOURCE_DIR
Cases:
  fixed     a fixed-base arm (robots/talus_dae_arm) gets no base height or base velocity panel, in
            the recording (panel titles in headless Chromium) and in --plot (talus_plot.py's panels
            from the --csv series, --fixed-base as talus passes it); a floating quadruped gets both
  legend    a 30-joint chain (written by the test): its joint panels have a filter box instead of
            uPlot's legend table; typing "j1" leaves the 11 series j1, j10 .. j19 shown, clicking a
            chip hides one more, clearing the box shows all 30
  system    robots/worlds/two_quadrupeds.xml: the recording lists both systems in a selector; choosing
            the second one (or #plots=1 in the address) rebuilds the panels on its series, which
            are recorded for every system (base velocity, joints, contact forces); --plot-system right
            makes --csv and --plot follow that robot (its base y is -0.75 m, the first's +0.75 m); an
            unknown name is a usage error naming it
Exit 77 (skipped) when chromium or matplotlib is missing, saying which.
"""
import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # viewer_cdp is imported from tests/: no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SKIP = 77
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


def talus(*args, timeout=600):
    return subprocess.run([TALUS, *args], capture_output=True, text=True, timeout=timeout)


def simulate(*args):
    r = talus("simulate", *args)
    check(r.returncode == 0, f"talus simulate {' '.join(args)}: exit {r.returncode} {r.stderr.strip()[-300:]}")
    return r


def embedded(path):
    with open(path, encoding="utf-8") as f:
        m = re.search(r'<script type="application/json" id="talus-data">(.*?)</script>', f.read(), re.S)
    return json.loads(m.group(1))


def plot_module():
    spec = importlib.util.spec_from_file_location("talus_plot", os.path.join(SOURCE, "src", "cli", "talus_plot.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Page:
    """One recording open in headless Chromium."""

    def __init__(self, path, hash_=""):
        from viewer_cdp import Browser
        if not CHROMIUM:
            skip("chromium not found (TALUS_CHROMIUM, /usr/bin/chromium)")
        self.b = Browser(CHROMIUM)
        got, err = self.b.open(f"file://{os.path.abspath(path)}#play=0{hash_}", timeout=120)
        check(got is not None and err is None, f"{os.path.basename(path)}{hash_} opens (frames {got}, error {err!r})")
        self.b.pump(0.5)

    def js(self, expr):
        return self.b.evaluate(expr)

    def titles(self):
        return self.js("[...document.querySelectorAll('#plots .plot h3')].map(h => h.textContent)") or []

    def shot(self, name):
        keep = os.environ.get("TALUS_TEST_KEEP")
        if keep:
            self.b.screenshot(os.path.join(keep, name))

    def errors(self):
        return [m for m in self.b.messages() if m[0] in ("error", "assert", "exception")]

    def close(self):
        check(not self.errors(), f"no console error or exception ({self.errors()[:2]})")
        self.b.close()


def case_fixed(tmp):
    arm = os.path.join(SOURCE, "robots", "talus_dae_arm", "talus_dae_arm.urdf")
    quad = os.path.join(SOURCE, "robots", "talus_quadruped", "talus_quadruped.urdf")
    for urdf, fixed in ((arm, True), (quad, False)):
        name = os.path.basename(urdf)[:-5]
        html, png, csv_path = (os.path.join(tmp, f"{name}.{e}") for e in ("html", "png", "csv"))
        simulate(urdf, "--duration", "1", "--record", html, "--plot", png, "--csv", csv_path)
        d = embedded(html)
        check(d["systems"][0]["base"] == ("fixed" if fixed else "floating"), f"{name}: base {d['systems'][0]['base']}")
        page = Page(html)
        titles = page.titles()
        page.shot(f"plots_{name}.png")
        has_base = any(t.startswith("Base") for t in titles)
        check(has_base != fixed, f"{name} ({'fixed' if fixed else 'floating'} base): recording panels {titles}")
        check("Joint positions (rad, m)" in titles, f"{name}: a joint position panel")
        page.close()
        with open(csv_path, newline="") as f:
            rows = list(csv.reader(f))
        cols = {n: [float(r[i]) for r in rows[1:]] for i, n in enumerate(rows[0])}
        panels = [p[0] for p in plot_module().panels(rows[0], cols, fixed)]
        check(("base height (m)" in panels) != fixed and ("base velocity (m/s)" in panels) != fixed,
              f"{name}: --plot panels {panels}")
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{name}: --plot wrote a PNG")


def chain_urdf(path, n):
    """A fixed-base chain of n revolute joints j1 .. jn (a hanging rope of capsule-like cylinders)."""
    s = ['<?xml version="1.0"?>', '<robot name="chain30">', '<link name="world"/>',
         '<link name="top"><inertial><mass value="1"/><inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0"'
         ' izz="1e-3"/></inertial></link>',
         '<joint name="world_to_top" type="fixed"><parent link="world"/><child link="top"/></joint>']
    parent = "top"
    for i in range(1, n + 1):
        s.append(f'<link name="l{i}"><inertial><origin xyz="0 0 -0.025"/><mass value="0.1"/>'
                 f'<inertia ixx="2.5e-5" ixy="0" ixz="0" iyy="2.5e-5" iyz="0" izz="5e-6"/></inertial>'
                 f'<visual><origin xyz="0 0 -0.025"/><geometry><cylinder radius="0.01" length="0.05"/></geometry>'
                 f'</visual></link>')
        z = 2.0 if i == 1 else -0.05
        s.append(f'<joint name="j{i}" type="revolute"><parent link="{parent}"/><child link="l{i}"/>'
                 f'<origin xyz="0 0 {z}" rpy="{0.3 if i == 1 else 0} 0 0"/><axis xyz="1 0 0"/>'
                 f'<limit lower="-3" upper="3" effort="10" velocity="10"/></joint>')
        parent = f"l{i}"
    s.append("</robot>")
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")


def case_legend(tmp):
    urdf = os.path.join(tmp, "chain30.urdf")
    chain_urdf(urdf, 30)
    html = os.path.join(tmp, "chain30.html")
    simulate(urdf, "--controller", "none", "--duration", "1", "--record", html)
    page = Page(html)
    n = page.js("document.querySelectorAll('.legend-filter').length")
    check(n == 2, f"joint positions and torques (30 series each) have a filter legend ({n})")
    n = page.js("document.querySelectorAll('.plot .u-legend').length")
    check(n == 1, f"only the energy panel (3 series) keeps uPlot's legend table ({n})")
    # the first filter box: type "j1"
    state = ("(() => { const f = document.querySelector('.legend-filter');"
             " const chips = [...f.querySelectorAll('.legend-chip')];"
             " return {count: f.querySelector('.legend-count').textContent,"
             " on: chips.filter(c => !c.classList.contains('off')).map(c => c.textContent)}; })()")
    typed = ("(() => { const i = document.querySelector('.legend-filter input'); i.value = %s;"
             " i.dispatchEvent(new Event('input')); return true; })()")
    page.js(typed % json.dumps("j1"))
    s = page.js(state)
    want = ["j1"] + [f"j{k}" for k in range(10, 20)]
    check(s["on"] == want and s["count"] == "11 of 30 shown", f"filter 'j1': {s['count']}, shown {s['on']}")
    page.shot("plots_legend_filtered.png")
    page.js("[...document.querySelector('.legend-filter').querySelectorAll('.legend-chip')]"
            ".find(c => c.textContent === 'j10').click()")
    s = page.js(state)
    check(s["count"] == "10 of 30 shown" and "j10" not in s["on"], f"clicking chip j10 hides it: {s['count']}")
    page.js(typed % json.dumps("j2, j30"))
    s = page.js(state)
    check(s["on"] == ["j2"] + [f"j{k}" for k in range(20, 31)], f"filter 'j2, j30' (any term): {s['on']}")
    page.js(typed % json.dumps(""))
    s = page.js(state)
    check(s["count"] == "30 of 30 shown", f"an empty filter shows every series: {s['count']}")
    page.close()


def case_system(tmp):
    world = os.path.join(SOURCE, "robots", "worlds", "two_quadrupeds.xml")
    html, csv0, csv1 = (os.path.join(tmp, n) for n in ("two.html", "left.csv", "right.csv"))
    png = os.path.join(tmp, "right.png")
    simulate(world, "--duration", "1", "--record", html, "--csv", csv0)
    simulate(world, "--duration", "1", "--csv", csv1, "--plot", png, "--plot-system", "right")
    d = embedded(html)
    ps = d.get("plot_systems") or []
    check(len(ps) == 2 and all(p["njq"] == 12 and p["nbm"] == 13 for p in ps),
          f"plot_systems: both systems' series recorded ({[(p.get('njq'), p.get('nbm')) for p in ps]})")
    # every system's contact forces are recorded: at rest each robot's feet carry its weight
    import array
    import base64
    fr = array.array("f")
    fr.frombytes(base64.b64decode(d["frames"]))
    F = d["layout"]["floats"]
    last = fr[(d["nframe"] - 1) * F:d["nframe"] * F]
    for p in ps:
        weight = d["systems"][p["system"]]["mass"] * 9.81
        fn = sum(last[p["body_fn"]:p["body_fn"] + p["nbm"]])
        check(abs(fn - weight) < 0.05 * weight,
              f"system {p['system']}: contact normal forces {fn:.1f} N = its weight {weight:.1f} N (5%)")
        vz = last[p["base_vel"] + 2]
        check(abs(vz) < 0.01, f"system {p['system']}: base velocity recorded, at rest ({vz:.4f} m/s)")
    ys = []
    for path in (csv0, csv1):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        ys.append(float(rows[-1]["base_y"]))
    check(abs(ys[0] - 0.75) < 0.05 and abs(ys[1] + 0.75) < 0.05,
          f"--csv follows the first system (base y {ys[0]:.3f}), --plot-system right the second ({ys[1]:.3f})")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "--plot-system right: a PNG")
    r = talus("simulate", world, "--duration", "0.01", "--csv", os.path.join(tmp, "x.csv"), "--plot-system", "nobody")
    check(r.returncode == 2 and "nobody" in r.stderr, f"--plot-system nobody: usage error naming it ({r.stderr.strip()})")
    page = Page(html)
    opts = page.js("[...document.querySelectorAll('#plot-system option')].map(o => o.textContent)")
    check(opts is not None and len(opts) == 2, f"a selector of the 2 systems ({opts})")
    # a value of the joint position panel (frame 30) before and after choosing the second system
    probe = "document.getElementById('plots').getAttribute('data-plot-system')"
    check(page.js(probe) == "0", "the plots follow system 0 first")
    page.shot("plots_system0.png")
    page.js("(() => { const s = document.getElementById('plot-system'); s.value = '1';"
            " s.dispatchEvent(new Event('change')); return true; })()")
    page.b.pump(0.5)
    titles = page.titles()
    check(page.js(probe) == "1" and "Joint positions (rad, m)" in titles and "Base height (m)" in titles,
          f"choosing the second system rebuilds the panels ({titles})")
    page.shot("plots_system1.png")
    page.close()
    page = Page(html, "&plots=1")
    check(page.js(probe) == "1", "#plots=1 opens on the second system")
    page.close()


def main():
    global TALUS, SOURCE, CHROMIUM
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    case, TALUS, SOURCE = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    CHROMIUM = chromium()
    if not CHROMIUM:
        skip("chromium not found (TALUS_CHROMIUM, /usr/bin/chromium)")
    if subprocess.run([sys.executable, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        skip("matplotlib not importable (Debian: python3-matplotlib)")
    tmp = tempfile.mkdtemp(prefix="talus-plots-")
    try:
        {"fixed": case_fixed, "legend": case_legend, "system": case_system}[case](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failure(s)" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
