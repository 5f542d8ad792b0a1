"""talus_bench --json and --batch --json: valid JSON with the documented keys, numbers that read
back exactly (run by ctest with /usr/bin/python3).

Guards: bench/bench_json.c, bench/bench_batch.c (bb_print_json), src/base/json_number.c (the
bit-exact number printer shared with `talus ... --json`), bench/bench_report.c.

Usage: test_bench_json.py CASE TALUS_BENCH_BINARY SOURCE_DIR

Cases (one ctest each; neither needs ../shared: the robots folder given is an empty temporary one,
so only the project's robots/talus_quadruped is timed):
  report   talus_bench --json --only talus_quadruped --no-scenes, with --no-peer and (when built
           with MuJoCo) with the peer: strict JSON (no NaN / Infinity tokens), every documented
           top-level, robot, memory and contact_step key; the robot's DOF counts (nq 19, nv 18);
           the memory table's bytes returned by the frees equal those allocated; the quadruped
           stands (base above half its start height); --batch-ms 0.30000000000000004 is reported
           as that double exactly (the old printf("%g") wrote 0.3).
           Issue 24 (bench): the derivative columns (rnea_derivatives_us, aba_derivatives_us, their
           _fd_us and rnea/aba_derivatives_fd_ratio) finite and positive, the analytic faster than
           Talus's own finite differences (ratio > 1); the derivatives doc with Pinocchio's
           published figures and the kernels' vector lanes; step_derivatives.talus_quadruped
           with finite positive us and fd_centred_us, the mode used, and peers.mujoco.ratio a
           finite positive number when the peer is built, else null with a reason.
  batch    talus_bench --batch --json with --robot a copy of talus_quadruped in a folder whose
           name holds a double quote and a backslash: strict JSON whose "robot" is that path (the
           old printf wrote it unescaped: invalid JSON), every documented row key, both thread
           counts ending bit-identical and no allocation while stepping.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

FAILED = []


def check(cond, what):
    print(("ok      " if cond else "FAILED  ") + what)
    if not cond:
        FAILED.append(what)


def no_constant(name):
    raise ValueError("not JSON: " + name)


def strict_json(text, what):
    """Parse text as JSON, refusing NaN / Infinity (Python accepts them by default)."""
    try:
        return json.loads(text, parse_constant=no_constant)
    except ValueError as e:
        check(False, f"{what}: valid JSON ({e}); start of output: {text[:300]!r}")
        return None


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, f"{what}: exit 0 (got {p.returncode}; stderr: {p.stderr[-500:]!r})")
    return p.stdout


COLUMNS = ["fk", "fk_crba_h", "crba_h", "rnea", "aba", "minv", "frame_jacobian", "step"]
TOP = ["generator", "units", "statistic", "batches", "batch_ms", "seed", "cpus_online",
       "load_average_1min", "peer", "columns", "memory", "memory_talus_doc", "contact_step",
       "robots", "scenes"]
TOP_PEER = ["ratio", "peer_model", "crosscheck", "crosscheck_tolerance", "peer_columns",
            "memory_peer_doc"]
ROBOT = ["robot", "urdf", "base", "nq", "nv", "nbody", "nframe", "jacobian_frame",
         "jacobian_frame_dofs", "memory", "contact_step"] + [c + "_us" for c in COLUMNS]
ROBOT_PEER = ["crosscheck", "crosscheck_ok"] + [c + "_peer_us" for c in COLUMNS] + \
             [c + "_ratio" for c in COLUMNS]
MEMORY = ["model_bytes", "world_bytes", "model_bytes_freed", "world_bytes_freed", "tracking_ok"]
CONTACT = ["kp", "kd", "gains", "us", "contacts", "active", "active_on_feet", "base_z", "start_z",
           "joints_moved_into_limits", "steps", "model_bytes", "world_bytes", "world_bytes_freed"]


def has_keys(obj, keys, what):
    missing = [k for k in keys if k not in obj]
    check(not missing, f"{what}: keys present (missing: {missing})")


def case_report(bench, src):
    with tempfile.TemporaryDirectory() as empty:
        peer_runs = [["--no-peer"], []]
        for extra in peer_runs:
            name = "report " + (" ".join(extra) or "(peer if built)")
            text = run([bench, empty, "--reps", "1", "--batch-ms", "0.30000000000000004",
                        "--only", "talus_quadruped", "--no-scenes", "--json"] + extra, name)
            d = strict_json(text, name)
            if d is None:
                continue
            has_peer = d.get("peer") is not None
            has_keys(d, TOP + (TOP_PEER if has_peer else ["peer_note"]), name + " top level")
            check(d.get("batch_ms") == 0.30000000000000004,
                  f"{name}: batch_ms reads back as the double given (got {d.get('batch_ms')!r})")
            check("0.30000000000000004" in text, f"{name}: batch_ms written with 17 digits")
            check('"batches":\t1' in text or '"batches": 1' in text, f"{name}: batches 1 written as 1")
            check(d.get("seed") == 20240601, f"{name}: seed 20240601 (got {d.get('seed')!r})")
            check(sorted(d.get("columns", {})) == sorted(COLUMNS), f"{name}: the 8 column docs")
            robots = d.get("robots", [])
            check(len(robots) == 1 and robots[0].get("robot") == "talus_quadruped",
                  f"{name}: one robot, talus_quadruped (got {[r.get('robot') for r in robots]})")
            check(d.get("scenes") == [], f"{name}: --no-scenes: scenes empty")
            if len(robots) != 1:
                continue
            r = robots[0]
            has_keys(r, ROBOT + (ROBOT_PEER if has_peer else []), name + " robot")
            check(r.get("nq") == 19 and r.get("nv") == 18 and r.get("base") == "floating",
                  f"{name}: talus_quadruped nq 19, nv 18, floating (got {r.get('nq')}, {r.get('nv')})")
            for c in ["fk", "fk_crba_h", "rnea", "aba", "minv", "frame_jacobian", "step"]:
                v = r.get(c + "_us")
                check(isinstance(v, (int, float)) and v > 0, f"{name}: {c}_us a positive time ({v!r})")
            m = r.get("memory", {})
            has_keys(m, MEMORY, name + " memory")
            check(m.get("model_bytes", 0) > 0 and m.get("model_bytes") == m.get("model_bytes_freed"),
                  f"{name}: tl_model_free returned the bytes the load allocated ({m.get('model_bytes')}, "
                  f"{m.get('model_bytes_freed')})")
            check(m.get("tracking_ok") is True, f"{name}: allocation tracking ok")
            cs = r.get("contact_step", {})
            has_keys(cs, CONTACT, name + " contact_step")
            z, z0 = cs.get("base_z"), cs.get("start_z")
            check(isinstance(z, float) and isinstance(z0, float) and z > 0.5 * z0,
                  f"{name}: the quadruped stands (base_z {z!r} > half of start_z {z0!r})")
            if has_peer:
                has_keys(cs, ["peers"], name + " contact_step")
                check(r.get("crosscheck_ok") is True and r["crosscheck"]["max"] <= d["crosscheck_tolerance"],
                      f"{name}: Talus and the peer agree at the benchmark state "
                      f"(max {r.get('crosscheck', {}).get('max')!r})")
            check_derivatives(d, r, has_peer, name)


def positive(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


DERIV = ["rnea_derivatives_us", "aba_derivatives_us", "rnea_derivatives_fd_us", "aba_derivatives_fd_us",
         "rnea_derivatives_fd_ratio", "aba_derivatives_fd_ratio", "aba_derivatives_over_aba"]


def check_derivatives(d, r, has_peer, name):
    """Issue 24 section 4: the derivative columns and the step_derivatives table."""
    for k in DERIV:
        check(positive(r.get(k)), f"{name}: {k} a finite positive number ({r.get(k)!r})")
    for k in ["rnea", "aba"]:
        an, fd = r.get(k + "_derivatives_us"), r.get(k + "_derivatives_fd_us")
        if positive(an) and positive(fd):
            check(abs(r.get(k + "_derivatives_fd_ratio", 0) - fd / an) <= 1e-12 * fd / an,
                  f"{name}: {k}_derivatives_fd_ratio = fd us / analytic us")
            # 4 nv (6 nv) evaluations of RNEA (ABA) with new kinematics against one analytic pass
            check(fd > an, f"{name}: {k} analytic derivatives faster than Talus's finite differences "
                           f"({an!r} us against {fd!r} us)")
        diff = r.get(k + "_derivatives_fd_difference")
        # centred differences, eps 1e-6: O(eps^2) truncation plus rounding / eps (about 1e-10 relative)
        check(isinstance(diff, float) and diff < 1e-5,
              f"{name}: {k} finite differences agree with the analytic derivatives ({diff!r} < 1e-5)")
    dv = d.get("derivatives", {})
    has_keys(dv, ["rnea_derivatives", "aba_derivatives", "pinocchio_published",
                  "pinocchio_published_arm_7dof_us", "pinocchio_published_humanoid_36dof_us"],
             name + " derivatives doc")
    check("not measured" in dv.get("pinocchio_published", "").lower(),
          f"{name}: Pinocchio's figures said to be published, not measured here")
    check(dv.get("vector_lanes") in (1, 2, 4) and isinstance(dv.get("vector_lanes_doc"), str),
          f"{name}: derivatives.vector_lanes (1, 2 or 4) with its doc: {dv.get('vector_lanes')!r}")
    sd = d.get("step_derivatives", {})
    check(isinstance(sd.get("doc"), str), f"{name}: step_derivatives doc")
    q = sd.get("talus_quadruped", {})
    has_keys(q, ["nv", "contacts", "us", "mode_used", "fd_centred_us", "peers"], name + " step_derivatives")
    check(q.get("nv") == 18 and q.get("contacts", 0) > 0,
          f"{name}: step_derivatives of the standing quadruped: nv 18, contacts on "
          f"({q.get('nv')!r}, {q.get('contacts')!r})")
    check(positive(q.get("us")) and positive(q.get("fd_centred_us")),
          f"{name}: step_derivatives us, fd_centred_us finite positive ({q.get('us')!r}, "
          f"{q.get('fd_centred_us')!r})")
    check(q.get("mode_used") in ("analytic", "fd_centred"), f"{name}: mode_used ({q.get('mode_used')!r})")
    mj = q.get("peers", {}).get("mujoco", {})
    has_keys(mj, ["built", "us", "forward_us", "ratio"], name + " step_derivatives.peers.mujoco")
    if has_peer and mj.get("built"):
        for k in ["us", "forward_us", "ratio", "forward_ratio"]:
            check(positive(mj.get(k)), f"{name}: step_derivatives mujoco {k} finite positive ({mj.get(k)!r})")
        if positive(mj.get("us")) and positive(q.get("us")):
            check(abs(mj["ratio"] - mj["us"] / q["us"]) <= 1e-12 * mj["ratio"],
                  f"{name}: step_derivatives ratio = mujoco us / talus us")
    else:
        check(mj.get("ratio") is None and isinstance(mj.get("reason"), str) and mj.get("reason"),
              f"{name}: no peer: step_derivatives mujoco ratio null with a reason ({mj!r})")


def case_batch(bench, src):
    with tempfile.TemporaryDirectory() as tmp:
        odd = os.path.join(tmp, 'quo"te\\back')
        os.mkdir(odd)
        urdf = os.path.join(odd, "talus_quadruped.urdf")
        shutil.copy(os.path.join(src, "robots", "talus_quadruped", "talus_quadruped.urdf"), urdf)
        text = run([bench, "--batch", tmp, "--robot", urdf, "--max-n", "1", "--steps", "10", "--reps", "1",
                    "--json"], "batch")
        d = strict_json(text, "batch")
        if d is None:
            return
        has_keys(d, ["benchmark", "robot", "dt", "reps", "steps_per_world", "cpus", "rows"], "batch top level")
        check(d.get("robot") == urdf, f"batch: robot is the path given, quote and backslash kept ({d.get('robot')!r})")
        check(d.get("benchmark") == "batched_worlds" and d.get("dt") == 0.001 and d.get("reps") == 1
              and d.get("steps_per_world") == 10, "batch: benchmark, dt, reps, steps_per_world as run")
        rows = d.get("rows", [])
        check(len(rows) == 2 and [r.get("scene") for r in rows] == ["standing", "trotting"],
              f"batch: one row per scene at N = 1 ({[r.get('scene') for r in rows]})")
        for r in rows:
            what = f"batch row {r.get('scene')}"
            has_keys(r, ["scene", "n", "steps", "steps_per_s", "threads", "scaling", "cpu_us_per_step",
                         "bytes_per_world", "controller_bytes_per_world", "rss_per_world", "step_alloc_bytes",
                         "identical"], what)
            check(r.get("identical") is True and r.get("step_alloc_bytes") == 0,
                  f"{what}: T=1 and T=2 bit-identical, no allocation while stepping")
            check(r.get("threads") == [1, 1] and len(r.get("steps_per_s", [])) == 2
                  and all(v > 0 for v in r.get("steps_per_s", [0])),
                  f"{what}: threads [1, 1] at N = 1, two positive rates ({r.get('steps_per_s')!r})")
            b = r.get("bytes_per_world")
            check(isinstance(b, (int, float)) and b > 0 and b == math.floor(b),
                  f"{what}: bytes_per_world a whole positive number ({b!r})")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    case, bench, src = sys.argv[1:]
    {"report": case_report, "batch": case_batch}[case](bench, src)
    if FAILED:
        print(f"{len(FAILED)} check(s) FAILED")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
