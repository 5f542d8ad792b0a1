# Guards: src/base/file.c (outputs, reads), src/base/limits.c and src/cli/cli_args.c (numbers),
# src/scene/scene_xml.c, src/sweep/spec_file.c (sweep paths), src/sweep/table.c (resume),
# src/world/snapshot.c.
"""Issue 21 §2: inputs and outputs that must not do harm (run by ctest with /usr/bin/python3).

Usage: test_io_harm.py CASE TALUS_BINARY SOURCE_DIR

Cases (one ctest each):
  outputs   --csv, --record, --plot and `talus sweep --out` never replace a device, FIFO or symlink:
            --csv /dev/null leaves /dev/null a character device (as root only: as another user the
            rename could not happen anyway, so that part is skipped, saying so); a FIFO receives the
            rows and stays a FIFO; a symlink stays a symlink and its target gets the rows; a link
            to nothing, and --csv x.txt, are refused.
  reads     --load-state /dev/zero, a world file's <system urdf="/dev/zero">, a FIFO as the URDF:
            refused at once ("not a regular file"), quickly, no memory growth; an oversized snapshot
            file is refused by its size.
  numbers   one validator per quantity: <timestep value="1e-300"> and "1e-13" refused like --dt;
            --port 0x50 refused (hexadecimal) like files refuse it.
  numbers   also: a world dt of 1e-9 with --duration 1e6 (1e15 steps) refused, not overflowed;
            terrain_size / terrain_spacing = 2^32 + 100 refused, not wrapped to 101 points.
  sweeppaths  a sweep file's <output csv="/abs">, "../x" or a symlink leading out is refused with the
            file and line (the command line's --out still goes anywhere); outputs are relative to
            the sweep file's folder; an existing file the run did not create is not overwritten
            without --force (--resume completes it).
  resume    --resume after editing a URDF that the swept world file names is refused (the spec hash
            covers every file read); a row whose parameter column differs from what (seed, sample)
            give is refused naming the file and line.
  files     a world file with a DOCTYPE (internal subset) or a default namespace gets the world
            loader's clear refusal, not the URDF loader's; q = 1e308 and q outside the joint limits
            refused with the line; a repeated <robot> or <run> in a sweep file refused.
"""
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAILED:", what, flush=True)
    else:
        print("ok:", what, flush=True)
    return cond


def run(cmd, timeout=120, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", "timed out after %g s" % timeout)


def pendulum(src):
    return os.path.abspath(os.path.join(src, "robots/pendulum/pendulum.urdf"))


def sim(talus, src, *extra):
    return run([talus, "simulate", pendulum(src), "--duration", "0.05", "--json", *extra])


def case_outputs(talus, src, tmp):
    # /dev/null
    if os.geteuid() == 0:
        r = sim(talus, src, "--csv", "/dev/null")
        check(r.returncode == 0, "--csv /dev/null runs (exit %d: %s)" % (r.returncode, r.stderr.strip()))
        check(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is still a character device after --csv")
        r = run([talus, "sweep", pendulum(src), "--controller", "none", "--duration", "0.02", "--samples", "2",
                 "--out", "/dev/null", "--summary", os.path.join(tmp, "s.json"), "--quiet"])
        check(r.returncode == 0, "sweep --out /dev/null runs (exit %d: %s)" % (r.returncode, r.stderr.strip()))
        check(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is still a character device after sweep --out")
    else:
        print("SKIPPED part: --csv /dev/null as root (not root here: the device cannot be replaced by this user)")
    # a FIFO: the rows arrive through it, it stays a FIFO
    fifo = os.path.join(tmp, "rows.csv")
    os.mkfifo(fifo)
    got = []

    def reader():
        with open(fifo) as f:
            got.append(f.read())
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    r = sim(talus, src, "--csv", fifo)
    th.join(30)
    check(r.returncode == 0, "--csv FIFO runs (%s)" % r.stderr.strip())
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO is still a FIFO after --csv")
    check(bool(got) and got[0].startswith("t,") and got[0].count("\n") >= 3, "the rows came through the FIFO")
    # a symlink: stays a symlink, its target gets the rows
    target = os.path.join(tmp, "target.csv")
    link = os.path.join(tmp, "link.csv")
    with open(target, "w") as f:
        f.write("old\n")
    os.symlink("target.csv", link)
    r = sim(talus, src, "--csv", link)
    check(r.returncode == 0, "--csv symlink runs (%s)" % r.stderr.strip())
    check(os.path.islink(link) and os.readlink(link) == "target.csv", "the symlink is still a symlink after --csv")
    check(open(target).read().startswith("t,"), "the symlink's target got the rows")
    if shutil.which("true"):
        rec = os.path.join(tmp, "rec_link.html")
        rec_target = os.path.join(tmp, "rec_target.html")
        open(rec_target, "w").write("old")
        os.symlink("rec_target.html", rec)
        r = sim(talus, src, "--record", rec)
        if "without the web viewer" in r.stderr:
            print("SKIPPED part: --record (this talus has no viewer page)")
        else:
            check(r.returncode == 0 and os.path.islink(rec), "--record through a symlink keeps the symlink")
            check("<html" in open(rec_target).read(200).lower(), "--record's symlink target got the page")
    # sweep --out through a symlink
    st = os.path.join(tmp, "sweep_target.csv")
    sl = os.path.join(tmp, "sweep_link.csv")
    open(st, "w").write("")
    os.symlink("sweep_target.csv", sl)
    r = run([talus, "sweep", pendulum(src), "--controller", "none", "--duration", "0.02", "--samples", "2",
             "--out", sl, "--summary", os.path.join(tmp, "s2.json"), "--quiet", "--force"])
    check(r.returncode == 0, "sweep --out symlink runs (%s)" % r.stderr.strip())
    check(os.path.islink(sl) and open(st).read().startswith("sample,"), "sweep --out: symlink kept, target written")
    # --save-state through a symlink: the link stays, the target holds the snapshot, which loads back
    st_target = os.path.join(tmp, "state_target.bin")
    st_link = os.path.join(tmp, "state_link.bin")
    open(st_target, "w").write("old")
    os.symlink("state_target.bin", st_link)
    r = sim(talus, src, "--save-state", st_link)
    check(r.returncode == 0 and os.path.islink(st_link) and open(st_target, "rb").read(7) == b"TLSTATE",
          "--save-state through a symlink keeps the link and writes its target (%s)" % r.stderr.strip()[:200])
    r = sim(talus, src, "--load-state", st_link)
    check(r.returncode == 0, "the snapshot loads back through the link (%s)" % r.stderr.strip()[:200])
    # a link to nothing is refused, nothing created
    dangling = os.path.join(tmp, "dangling.csv")
    os.symlink("nowhere/x.csv", dangling)
    r = sim(talus, src, "--csv", dangling)
    check(r.returncode != 0 and "symbolic link" in r.stderr, "--csv to a dangling symlink refused (%s)" % r.stderr.strip())
    # the extension the docs promise
    r = sim(talus, src, "--csv", os.path.join(tmp, "x.txt"))
    check(r.returncode == 2 and ".csv" in r.stderr and not os.path.exists(os.path.join(tmp, "x.txt")),
          "--csv x.txt refused by its extension (%s)" % r.stderr.strip())


def rss_kb(usage):
    return usage.ru_maxrss


def case_reads(talus, src, tmp):
    t0 = time.time()
    r = sim(talus, src, "--load-state", "/dev/zero")
    dt = time.time() - t0
    check(r.returncode != 0 and "regular file" in r.stderr, "--load-state /dev/zero refused (%s)" % r.stderr.strip())
    check(dt < 10, "--load-state /dev/zero refused quickly (%.2f s)" % dt)
    big = os.path.join(tmp, "big.bin")
    with open(big, "wb") as f:
        f.truncate(1 << 30)  # sparse: 1 GB of zeros on no disk
    r = sim(talus, src, "--load-state", big)
    check(r.returncode != 0 and "larger than" in r.stderr, "a 1 GB snapshot file is refused by its size (%s)"
          % r.stderr.strip())
    world = os.path.join(tmp, "w.xml")
    with open(world, "w") as f:
        f.write('<talus_world>\n  <system name="a" urdf="/dev/zero"/>\n</talus_world>\n')
    t0 = time.time()
    r = run([talus, "simulate", world, "--duration", "0.01"])
    dt = time.time() - t0
    check(r.returncode != 0 and "regular file" in r.stderr, "<system urdf=\"/dev/zero\"> refused (%s)" % r.stderr.strip())
    check(dt < 5, "<system urdf=\"/dev/zero\"> refused quickly (%.2f s)" % dt)
    fifo = os.path.join(tmp, "robot.urdf")
    os.mkfifo(fifo)
    r = run([talus, "simulate", fifo, "--duration", "0.01"], timeout=20)
    check(r.returncode != 0 and "regular file" in r.stderr, "a FIFO as the URDF is refused, not waited on (%s)"
          % r.stderr.strip())


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    case, talus, src = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    cases = {"outputs": case_outputs, "reads": case_reads}
    cases.update(EXTRA)
    if case not in cases:
        print("unknown case", case)
        return 2
    tmp = tempfile.mkdtemp(prefix="talus_io_")
    try:
        cases[case](talus, src, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILED:
        print("%d check(s) failed" % len(FAILED))
        return 1
    return 0



def case_numbers(talus, src, tmp):
    """One validator per quantity, one number parser."""
    world = os.path.join(tmp, "w.xml")
    for dt in ("1e-300", "1e-13"):
        with open(world, "w") as f:
            f.write('<talus_world>\n  <timestep value="%s"/>\n  <ground/>\n  <system name="p" urdf="%s"/>\n'
                    '</talus_world>\n' % (dt, pendulum(src)))
        r = run([talus, "simulate", world, "--duration", "1", "--json"], timeout=60)
        check(r.returncode != 0 and "time step" in r.stderr and "w.xml:2" in r.stderr,
              "<timestep value=\"%s\"> refused with the line, like --dt (exit %d: %s)" % (dt, r.returncode, r.stderr.strip()[:200]))
        r = sim(talus, src, "--dt", dt)
        check(r.returncode != 0 and "time step" in r.stderr, "--dt %s refused by the same rule (%s)" % (dt, r.stderr.strip()))
    # a valid world dt with a --duration that makes too many steps: refused, not overflowed to 0 steps
    with open(world, "w") as f:
        f.write('<talus_world>\n  <timestep value="1e-9"/>\n  <system name="p" urdf="%s"/>\n</talus_world>\n'
                % pendulum(src))
    r = run([talus, "simulate", world, "--duration", "1e6", "--json"], timeout=60)
    check(r.returncode != 0 and "steps" in r.stderr, "world dt 1e-9 with --duration 1e6 (1e15 steps) refused (%s)"
          % r.stderr.strip()[:200])
    r = sim(talus, src, "--view", "--port", "0x50")
    check(r.returncode == 2 and "0x50" in r.stderr, "--port 0x50 refused, not port 80 (%s)" % r.stderr.strip())
    r = run([talus, "simulate", os.path.join(src, "robots/talus_quadruped/talus_quadruped.urdf"), "--controller",
             "trot:speed=0x1", "--duration", "0.01"])
    check(r.returncode == 2 and "0x1" in r.stderr, "a controller parameter 0x1 refused (%s)" % r.stderr.strip())
    r = sim(talus, src, "--dt", "0x1p-10")
    check(r.returncode == 2, "--dt 0x1p-10 (hexadecimal float) refused (%s)" % r.stderr.strip())
    # terrain grid size: 2^32 + 100 points per side never wraps to 101
    r = run([talus, "sweep", pendulum(src), "--controller", "none", "--duration", "0.02", "--samples", "1",
             "--param", "terrain_roughness=uniform:0.01:0.02", "--terrain-size", "4294967.395",
             "--terrain-spacing", "0.001", "--out", os.path.join(tmp, "t.csv"), "--quiet"], timeout=60)
    check(r.returncode != 0 and "grid points" in r.stderr, "terrain_size / terrain_spacing = 2^32 + 100 refused (%s)"
          % r.stderr.strip()[:300])


EXTRA = {"numbers": case_numbers}


def sweep_file(folder, output):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "s.xml")
    with open(path, "w") as f:
        f.write('<talus_sweep>\n  <robot urdf="%s"/>\n  <controller name="none"/>\n'
                '  <run duration="0.02" samples="2"/>\n  %s\n</talus_sweep>\n' % (PENDULUM_ABS, output))
    return path


def case_sweeppaths(talus, src, tmp):
    """A sweep file writes only inside its folder and overwrites nothing without --force / --resume."""
    global PENDULUM_ABS
    PENDULUM_ABS = pendulum(src)
    victim = os.path.join(tmp, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious\n")
    d = os.path.join(tmp, "downloaded")
    cwd = os.path.join(tmp, "cwd")
    os.makedirs(cwd)
    for attr in ('csv="%s"' % victim, 'summary="%s"' % victim, 'csv="../victim.txt"', 'plot="sub/../../victim.png"'):
        spec = sweep_file(d, "<output %s/>" % attr)
        r = run([talus, "sweep", spec, "--quiet"], cwd=cwd)
        check(r.returncode != 0 and "s.xml:5" in r.stderr and ("absolute" in r.stderr or "'..'" in r.stderr),
              "<output %s> refused with the file and line (%s)" % (attr, r.stderr.strip()[:200]))
        check(open(victim).read() == "precious\n", "<output %s>: the file outside is untouched" % attr)
    # a symlink in the folder that leads out
    os.symlink(tmp, os.path.join(d, "out"))
    spec = sweep_file(d, '<output csv="out/victim.txt"/>')
    r = run([talus, "sweep", spec, "--quiet"], cwd=cwd)
    check(r.returncode != 0 and "symbolic link" in r.stderr, "a symlink leading out of the folder refused (%s)"
          % r.stderr.strip()[:200])
    check(open(victim).read() == "precious\n", "symlink: the file outside is untouched")
    # relative paths are relative to the sweep file's folder, not the current one
    spec = sweep_file(d, '<output csv="rows.csv" summary="rows.json"/>')
    r = run([talus, "sweep", spec, "--quiet"], cwd=cwd)
    check(r.returncode == 0 and os.path.exists(os.path.join(d, "rows.csv")) and not os.path.exists(os.path.join(cwd, "rows.csv")),
          "<output csv=\"rows.csv\"> is written beside the sweep file (%s)" % r.stderr.strip()[:200])
    # an existing file this run did not write: refused without --force; --resume completes it
    before = open(os.path.join(d, "rows.csv")).read()
    r = run([talus, "sweep", spec, "--quiet"], cwd=cwd)
    check(r.returncode != 0 and "--force" in r.stderr, "a second run does not overwrite rows.csv without --force (%s)"
          % r.stderr.strip()[:200])
    r = run([talus, "sweep", spec, "--quiet", "--resume"], cwd=cwd)
    check(r.returncode == 0 and open(os.path.join(d, "rows.csv")).read() == before, "--resume completes it (same rows)")
    r = run([talus, "sweep", spec, "--quiet", "--force"], cwd=cwd)
    check(r.returncode == 0 and open(os.path.join(d, "rows.csv")).read() == before, "--force overwrites it")
    # the command line may write anywhere (but still not over a file without --force)
    r = run([talus, "sweep", spec, "--quiet", "--out", victim, "--summary", os.path.join(tmp, "v.json")], cwd=cwd)
    check(r.returncode != 0 and open(victim).read() == "precious\n", "--out over an existing file refused without --force")
    anywhere = os.path.join(tmp, "elsewhere.csv")
    r = run([talus, "sweep", spec, "--quiet", "--out", anywhere, "--summary", os.path.join(tmp, "e.json")], cwd=cwd)
    check(r.returncode == 0 and os.path.exists(anywhere), "--out on the command line goes outside the folder (%s)"
          % r.stderr.strip()[:200])


EXTRA["sweeppaths"] = case_sweeppaths


def case_resume(talus, src, tmp):
    """--resume trusts only what it checks: every file the run reads is in the spec hash, and the
    parameter columns of each resumed row are recomputed from (seed, sample)."""
    robot = os.path.join(tmp, "pendulum.urdf")
    shutil.copy(pendulum(src), robot)
    world = os.path.join(tmp, "w.xml")
    with open(world, "w") as f:
        f.write('<talus_world>\n  <ground/>\n  <system name="p" urdf="pendulum.urdf"/>\n</talus_world>\n')
    out = os.path.join(tmp, "w.csv")
    base = [talus, "sweep", world, "--controller", "none", "--duration", "0.02", "--param", "mass_scale=uniform:0.5:2",
            "--out", out, "--quiet"]
    r = run(base + ["--samples", "3"])
    check(r.returncode == 0, "a world-file sweep runs (%s)" % r.stderr.strip()[:200])
    text = open(robot).read()
    import re
    edited, n = re.subn(r'mass value="([0-9.]+)"', lambda m: 'mass value="%g"' % (2 * float(m.group(1))), text, count=1)
    check(n == 1, "the robot's mass was edited")
    with open(robot, "w") as f:
        f.write(edited)
    r = run(base + ["--samples", "5", "--resume"])
    check(r.returncode != 0 and "not this sweep's" in r.stderr,
          "--resume after editing a URDF the world file names is refused (%s)" % r.stderr.strip()[:300])
    # a row whose parameter column was altered
    out2 = os.path.join(tmp, "p.csv")
    base2 = [talus, "sweep", pendulum(src), "--controller", "none", "--duration", "0.02", "--seed", "7",
             "--param", "mass_scale=uniform:0.5:2", "--out", out2, "--quiet"]
    r = run(base2 + ["--samples", "3"])
    check(r.returncode == 0, "a URDF sweep runs (%s)" % r.stderr.strip()[:200])
    lines = open(out2).read().splitlines()
    head = lines[0].split(",")
    col = head.index("mass_scale")
    row = lines[2].split(",")
    row[col] = repr(float(row[col]) * 1.001)
    lines[2] = ",".join(row)
    with open(out2, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = run(base2 + ["--samples", "5", "--resume"])
    check(r.returncode != 0 and "mass_scale" in r.stderr and "p.csv:3" in r.stderr,
          "--resume refuses a row whose parameter differs from what (seed, sample) give, naming file and line (%s)"
          % r.stderr.strip()[:300])


EXTRA["resume"] = case_resume


def case_files(talus, src, tmp):
    """World and sweep files: the root element routes a file to its loader (a DOCTYPE or a default
    namespace gets the world loader's own clear message, not the URDF loader's); q = 1e308 and a q
    outside the joint limits are refused with the line; a sweep file refuses a repeated <robot> or
    <run> as world files refuse repeats."""
    p = pendulum(src)
    cases = {
        "doctype_subset.xml": ('<?xml version="1.0"?>\n<!DOCTYPE talus_world [\n  <!ELEMENT talus_world ANY>\n]>\n'
                               '<talus_world>\n  <system name="p" urdf="%s"/>\n</talus_world>\n' % p, "DOCTYPE"),
        "namespace.xml": ('<talus_world xmlns="http://example.com/talus">\n  <system name="p" urdf="%s"/>\n'
                          '</talus_world>\n' % p, "namespace"),
        "q_huge.xml": ('<talus_world>\n  <system name="p" urdf="%s" q="1e308"/>\n</talus_world>\n' % p, "q[0]"),
    }
    for name, (text, expect) in cases.items():
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        r = run([talus, "simulate", path, "--duration", "0.01", "--json"])
        check(r.returncode != 0 and expect in r.stderr and "expected <robot>" not in r.stderr
              and ("%s:" % name) in r.stderr,
              "%s refused by the world loader naming '%s' (%s)" % (name, expect, r.stderr.strip()[:250]))
    # a q outside the joint's limits, with the line
    path = os.path.join(tmp, "q_limit.xml")  # the pendulum's hinge is limited to +-2 pi
    with open(path, "w") as f:
        f.write('<talus_world>\n  <ground/>\n  <system name="p" urdf="%s"\n    q="40"/>\n</talus_world>\n' % p)
    r = run([talus, "simulate", path, "--duration", "0.01", "--json"])
    check(r.returncode != 0 and "outside its limits" in r.stderr and "q_limit.xml:3" in r.stderr,
          "q outside the joint limits refused with the line (%s)" % r.stderr.strip()[:250])
    # repeated sweep elements
    for elem, twice in (("robot", '<robot urdf="%s"/>\n  <robot urdf="%s"/>' % (p, p)),
                        ("run", '<robot urdf="%s"/>\n  <run samples="2"/>\n  <run samples="3"/>' % p)):
        spec = os.path.join(tmp, "twice_%s.xml" % elem)
        with open(spec, "w") as f:
            f.write('<talus_sweep>\n  %s\n  <controller name="none"/>\n</talus_sweep>\n' % twice)
        r = run([talus, "sweep", spec, "--duration", "0.01", "--out", os.path.join(tmp, "t.csv"), "--quiet"])
        check(r.returncode != 0 and "given twice" in r.stderr, "a repeated <%s> in a sweep file is refused (%s)"
              % (elem, r.stderr.strip()[:250]))


EXTRA["files"] = case_files


if __name__ == "__main__":
    sys.exit(main())
