# Guards: src/cli/cli_sweep.c, src/sweep/ (run.c, table.c resume, mpi.c, summary.c, spec_file.c).
"""`talus sweep` end to end (run by ctest with Debian's /usr/bin/python3).

Usage: test_sweep.py CASE TALUS_BINARY SOURCE_DIR

Cases (one ctest each):
  threads  the same sweep (talus_quadruped trotting, friction, mass, pushes) on 1 and on 2 threads
           gives byte-identical CSVs and summaries; rows in sample order; the summary's counts,
           success rate and Wilson interval agree with the CSV; the command-line options override a
           sweep file's settings and the file gives the same rows as the options.
  mpi      `mpirun -np 2 talus sweep ...` gives the CSV and summary of the one-process run byte for
           byte; a run whose rank 1 is killed (SIGKILL) halfway leaves a CSV of whole rows that
           --resume completes to the same bytes. Skipped (77) without mpirun or a talus built
           without MPI.
  resume   a run killed halfway (SIGKILL, and SIGINT: exit 130, rows kept in sample order) leaves a
           valid partial CSV (header, whole rows of this sweep); --resume runs only the missing
           samples and ends with the bytes of an uninterrupted run; --resume of another sweep's CSV
           is refused naming the file and line.
  errors   a negative mass scale, a friction below 0, an unknown link: exit 2 before any sample
           runs, the message names the parameter, no output file is created; a malformed sweep
           file names the file and line; a diverging sample is recorded as `diverged` and the
           sweep goes on.
  plot     --plot writes a PNG (skipped without matplotlib); the example sweep files run.
"""
import csv
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAILED:", what, flush=True)
    return cond


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def sweep_args(talus, src, out, samples=40, extra=()):
    return [talus, "sweep", os.path.join(src, "robots/talus_quadruped/talus_quadruped.urdf"), "--controller",
            "trot:speed=0.5", "--duration", "1.2", "--samples", str(samples), "--seed", "3", "--param",
            "friction=loguniform:0.03:1", "--param", "mass_scale=normal:1:0.15", "--param", "push=uniform:0:250",
            "--out", out, "--quiet", *extra]


def mpirun():
    exe = shutil.which("mpirun") or shutil.which("mpiexec")
    if not exe:
        return None
    # Running as root (containers) needs OpenMPI's consent; --oversubscribe lets 2 ranks share fewer cores;
    # shared memory without the kernel's single-copy mechanism works inside containers.
    return [exe, "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader", "--mca",
            "btl_vader_single_copy_mechanism", "none"]


def mpi_env():
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    return env


def wait_rows(path, n, proc, timeout=120):
    """Wait until the CSV has at least n rows (or the process ended)."""
    t0 = time.time()
    while time.time() - t0 < timeout and proc.poll() is None:
        try:
            with open(path) as f:
                if f.read().count("\n") > n:
                    return True
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    return False


def valid_partial(path, full_rows):
    """Header, then whole rows each equal to the uninterrupted run's row of that sample."""
    got = rows(path)
    ok = check(got and got[0] == full_rows[0], "partial CSV: header")
    by_sample = {r[0]: r for r in full_rows[1:]}
    for r in got[1:]:
        ok = check(r[0] in by_sample and r == by_sample[r[0]], f"partial CSV: row {r[:2]} differs") and ok
    with open(path, "rb") as f:
        ok = check(f.read().endswith(b"\n"), "partial CSV ends with a whole row") and ok
    return len(got) - 1


def case_threads(talus, src, tmp):
    a, b = os.path.join(tmp, "t1.csv"), os.path.join(tmp, "t2.csv")
    r1 = run(sweep_args(talus, src, a, extra=["--threads", "1"]))
    r2 = run(sweep_args(talus, src, b, extra=["--threads", "2"]))
    check(r1.returncode == 0 and r2.returncode == 0, f"runs: {r1.stderr} {r2.stderr}")
    check(open(a, "rb").read() == open(b, "rb").read(), "1 and 2 threads: CSVs differ")
    check(open(a[:-4] + ".json", "rb").read() == open(b[:-4] + ".json", "rb").read(), "1 and 2 threads: summaries differ")
    t = rows(a)
    check([int(r[0]) for r in t[1:]] == list(range(40)), "rows in sample order")
    status = [r[t[0].index("status")] for r in t[1:]]
    check("ok" in status and "fell" in status, f"the pushes make some fall: {set(status)}")
    s = json.load(open(a[:-4] + ".json"))
    k = status.count("ok")
    check(s["status"]["ok"] == k and s["success"]["successes"] == k, "summary counts")
    z = 1.959963984540054
    p, n = k / 40, 40
    c, h = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    check(abs(s["success"]["wilson95"][0] - max(0, c - h)) < 1e-12 and abs(s["success"]["wilson95"][1] - min(1, c + h)) < 1e-12,
          f"Wilson interval {s['success']['wilson95']}")
    push = [p for p in s["parameters"] if p["column"] == "push"][0]
    check(push["correlation_with_success"] is not None and push["correlation_with_success"] < 0,
          f"pushes harm: correlation {push['correlation_with_success']}")
    # the same sweep as a file (options override: --samples, --out)
    spec = os.path.join(tmp, "s.xml")
    with open(spec, "w") as f:
        f.write(f"""<talus_sweep name="test">
  <robot urdf="{os.path.join(src, 'robots/talus_quadruped/talus_quadruped.urdf')}"/>
  <controller name="trot"><param key="speed" value="0.5"/></controller>
  <run duration="1.2" samples="999" seed="3"/>
  <param name="friction" dist="loguniform:0.03:1"/>
  <param name="mass_scale" dist="normal:1:0.15"/>
  <param name="push" dist="uniform:0:250"/>
  <output csv="never_written.csv"/>
</talus_sweep>
""")
    c = os.path.join(tmp, "file.csv")
    r = run([talus, "sweep", spec, "--samples", "40", "--out", c, "--quiet"], cwd=tmp)
    check(r.returncode == 0, f"sweep file: {r.stderr}")
    check(os.path.exists(c) and open(c, "rb").read() == open(a, "rb").read(), "the sweep file gives the options' rows")
    check(not os.path.exists(os.path.join(tmp, "never_written.csv")), "--out overrides the file's csv")


def case_mpi(talus, src, tmp):
    mpi = mpirun()
    if not mpi:
        print("SKIPPED: mpirun not found")
        return SKIP
    one = os.path.join(tmp, "one.csv")
    r = run(sweep_args(talus, src, one, samples=60, extra=["--threads", "1"]))
    check(r.returncode == 0, f"one process: {r.stderr}")
    two = os.path.join(tmp, "two.csv")
    r = run(mpi + ["-np", "2"] + sweep_args(talus, src, two, samples=60), env=mpi_env())
    if "built without MPI" in r.stderr:
        print("SKIPPED: this talus was built without MPI")
        return SKIP
    check(r.returncode == 0, f"mpirun -np 2: exit {r.returncode}: {r.stderr[-2000:]}")
    check(os.path.exists(two) and open(two, "rb").read() == open(one, "rb").read(), "mpirun -np 2: the CSV differs")
    check(os.path.exists(two[:-4] + ".json") and open(two[:-4] + ".json", "rb").read() == open(one[:-4] + ".json", "rb").read(),
          "mpirun -np 2: the summary differs")
    # kill rank 1 halfway
    full = rows(one)
    killed = os.path.join(tmp, "killed.csv")
    p = subprocess.Popen(mpi + ["-np", "2"] + sweep_args(talus, src, killed, samples=60), env=mpi_env(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_rows(killed, 15, p)
    victim = None
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if b"OMPI_COMM_WORLD_RANK=1" in env and killed.encode() in cmd:
            victim = int(pid)
    check(victim is not None, "rank 1 found")
    if victim:
        os.kill(victim, signal.SIGKILL)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    n = valid_partial(killed, full)
    check(0 < n < 60 or n == 60, f"killed run: {n} rows")
    r = run(mpi + ["-np", "2"] + sweep_args(talus, src, killed, samples=60, extra=["--resume"]), env=mpi_env())
    check(r.returncode == 0, f"resume under mpirun: {r.stderr[-2000:]}")
    check(open(killed, "rb").read() == open(one, "rb").read(), "after a killed rank and --resume: the CSV differs")
    return 0


def case_resume(talus, src, tmp):
    full = os.path.join(tmp, "full.csv")
    r = run(sweep_args(talus, src, full, samples=80, extra=["--threads", "2"]))
    check(r.returncode == 0, f"full run: {r.stderr}")
    full_rows = rows(full)
    for sig in (signal.SIGKILL, signal.SIGINT):
        part = os.path.join(tmp, f"part{int(sig)}.csv")
        p = subprocess.Popen(sweep_args(talus, src, part, samples=80, extra=["--threads", "2"]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        check(wait_rows(part, 20, p), f"{sig.name}: the run wrote 20 rows")
        p.send_signal(sig)
        err = p.communicate(timeout=60)[1]
        if sig == signal.SIGINT:
            check(p.returncode == 130 and "--resume" in err, f"SIGINT: exit {p.returncode}: {err}")
        n = valid_partial(part, full_rows)
        check(20 <= n < 80, f"{sig.name}: {n} rows kept")
        if sig == signal.SIGINT:
            got = [int(r[0]) for r in rows(part)[1:]]
            check(got == sorted(got), "after SIGINT the rows are in sample order")
        r = run(sweep_args(talus, src, part, samples=80, extra=["--threads", "2", "--resume"]))
        check(r.returncode == 0, f"{sig.name}: resume: {r.stderr}")
        check("(%d run now)" % (80 - n) in r.stdout, f"{sig.name}: resume ran only the missing samples: {r.stdout}")
        check(open(part, "rb").read() == open(full, "rb").read(), f"{sig.name}: resumed CSV differs")
        check(open(part[:-4] + ".json", "rb").read() == open(full[:-4] + ".json", "rb").read(),
              f"{sig.name}: resumed summary differs")
    # another sweep's CSV: refused, nothing run, the file untouched
    before = open(full, "rb").read()
    args = sweep_args(talus, src, full, samples=80, extra=["--resume"])
    args[args.index("push=uniform:0:250")] = "push=uniform:0:200"
    r = run(args)
    check(r.returncode == 2 or r.returncode == 1, f"another sweep's CSV: exit {r.returncode}")
    check(full + ":2:" in r.stderr and "spec" in r.stderr, f"the error names the file and line: {r.stderr}")
    check(open(full, "rb").read() == before, "the CSV of another sweep was left alone")


def case_errors(talus, src, tmp):
    quad = os.path.join(src, "robots/talus_quadruped/talus_quadruped.urdf")
    for param, name in (("mass_scale=uniform:-0.5:1.5", "mass_scale"), ("friction=uniform:-0.2:1", "friction"),
                        ("friction=-0.1", "friction"), ("mass_scale@NO_SUCH_LINK=1.2", "mass_scale@NO_SUCH_LINK")):
        out = os.path.join(tmp, "e.csv")
        r = run([talus, "sweep", quad, "--param", param, "--out", out])
        check(r.returncode == 2, f"{param}: exit {r.returncode}")
        check(f"parameter {name}:" in r.stderr, f"{param}: the message names it: {r.stderr}")
        check(not os.path.exists(out) and not os.path.exists(out[:-4] + ".json"), f"{param}: an output was created")
    bad = os.path.join(tmp, "bad.xml")
    with open(bad, "w") as f:
        f.write('<talus_sweep>\n  <robot urdf="x.urdf"/>\n  <param name="friction" dist="uniform:2:1"/>\n</talus_sweep>\n')
    r = run([talus, "sweep", bad])
    check(r.returncode == 2 and f"{bad}:3:" in r.stderr and "LO must be <= HI" in r.stderr, f"bad sweep file: {r.stderr}")
    # a diverging sample does not stop the sweep
    out = os.path.join(tmp, "div.csv")
    r = run([talus, "sweep", os.path.join(src, "tests/sweep/pendulum_continuous.urdf"), "--controller",
             "impedance:k=1e4,zeta=0,d=0,gravity=0", "--q", "0.3", "--dt", "0.01", "--duration", "2", "--samples", "6",
             "--param", "kp_scale=choice:0.1,1000", "--out", out, "--quiet"])
    check(r.returncode == 0, f"diverging sweep: exit {r.returncode}: {r.stderr}")
    t = rows(out)
    st = {r[t[0].index("kp_scale")]: set() for r in t[1:]}
    for r in t[1:]:
        st[r[t[0].index("kp_scale")]].add(r[t[0].index("status")])
    check(len(t) == 7 and st.get("1000") == {"diverged"} and st.get("0.10000000000000001") == {"ok"}, f"statuses {st}")


def case_plot(talus, src, tmp):
    if run(["/usr/bin/python3", "-c", "import matplotlib"]).returncode != 0:
        print("SKIPPED: no matplotlib")
        return SKIP
    png = os.path.join(tmp, "s.png")
    r = run(sweep_args(talus, src, os.path.join(tmp, "p.csv"), samples=12, extra=["--plot", png]))
    check(r.returncode == 0, f"--plot: {r.stderr}")
    check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 20000,
          "--plot wrote a PNG")
    for name in sorted(os.listdir(os.path.join(src, "examples/sweeps"))):
        if not name.endswith(".xml"):
            continue
        path = os.path.join(src, "examples/sweeps", name)
        out = os.path.join(tmp, name[:-4] + ".csv")
        grid = "grid" in name  # a full factorial sets its own number of samples
        r = run([talus, "sweep", path, *([] if grid else ["--samples", "4"]), "--duration", "0.3", "--out", out,
                 "--summary", out[:-4] + ".json", "--quiet"])  # nothing written beside the examples
        if "cannot read" in r.stderr and "shared" in r.stderr:
            print(f"SKIPPED: {name} needs ../shared")
            continue
        check(r.returncode == 0 and (grid or len(rows(out)) == 5), f"example {name}: {r.stderr}")


def main(argv):
    if len(argv) < 4:
        raise SystemExit(__doc__)
    case, talus, src = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    with tempfile.TemporaryDirectory(prefix="talus_test_sweep_") as tmp:
        rc = {"threads": case_threads, "mpi": case_mpi, "resume": case_resume, "errors": case_errors,
              "plot": case_plot}[case](talus, src, tmp)
    if FAILED:
        print(f"{len(FAILED)} checks failed")
        return 1
    if rc == SKIP:
        return SKIP
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
