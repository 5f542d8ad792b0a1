# Guards: python/src/py_record.c, python/src/py_world.c (engine=, get_state / set_state),
# python/talus/vecenv.py (record_env).
"""World.record / VecEnv(record_env=...) (issue 13), World(engine=...) (issue 15) and world
snapshots snapshot_save / snapshot_restore (issue 11; get_state / set_state before issue 22) from Python."""
import csv
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import talus
from conftest import CARTPOLE, ROBOTS, build_dir

QUADRUPED = ROBOTS / "talus_quadruped" / "talus_quadruped.urdf"
BALL = ROBOTS / "ball" / "ball.urdf"


def standing_world(engine=None):
    m = talus.Model.from_urdf(str(QUADRUPED))
    w = talus.World(engine=engine) if engine else talus.World()
    w.add_ground()
    s = w.add_system(m)
    q = m.default_q.copy()
    q[2] = 0.53
    s.q = q
    kp = np.zeros(m.nv)
    kd = np.zeros(m.nv)
    kp[6:], kd[6:] = 300.0, 10.0
    s.set_pd_gains(kp, kd)
    s.set_pd_targets(q, np.zeros(m.nv))
    return w, s


# ------------------------------------------------------------------ recordings

needs_viewer = pytest.mark.skipif(not talus.have_viewer, reason="built without the web viewer (web/node_modules "
                                  "missing when CMake ran): HTML recordings are refused, see test_record_without_viewer")


@needs_viewer
def test_world_record_writes_page_and_csv(tmp_path):
    w, s = standing_world()
    page, series = tmp_path / "run.html", tmp_path / "run.csv"
    with w.record(page, fps=60, csv=series) as rec:
        w.step(1000)
        assert rec.nframe == 61  # frame 0, then one per 1/60 s of 1 s
    assert rec.closed
    text = page.read_text()
    assert "<html" in text.lower() and len(text) > 100_000  # three.js and uPlot are embedded
    rows = list(csv.reader(series.open()))
    assert rows[0][:4] == ["t", "base_x", "base_y", "base_z"]
    assert len(rows) == 1 + 61
    z = np.array([float(r[3]) for r in rows[1:]])
    assert abs(z[-1] - s.q[2]) < 1e-6  # float32 frames of the same run
    t = np.array([float(r[0]) for r in rows[1:]])
    assert np.all(np.diff(t) > 0) and abs(t[-1] - 1.0) < 1e-9


@needs_viewer
def test_recording_does_not_change_the_run(tmp_path):
    a, sa = standing_world()
    b, sb = standing_world()
    with b.record(tmp_path / "b.html", fps=0):  # a frame at every step
        for _ in range(300):
            a.step()
            b.step()
    assert np.array_equal(sa.q, sb.q) and np.array_equal(sa.u, sb.u)


@needs_viewer
def test_record_checks_paths_first_and_one_at_a_time(tmp_path):
    w, _ = standing_world()
    with pytest.raises(talus.Error, match="nonexistent"):
        w.record("/nonexistent/folder/run.html")
    assert w.time == 0.0
    rec = w.record(tmp_path / "x.html")
    with pytest.raises(RuntimeError, match="already open"):
        w.record(tmp_path / "y.html")
    rec.close()
    rec.close()  # idempotent
    assert (tmp_path / "x.html").exists()
    w.record(tmp_path / "z.html").close()  # a new one may open after the close


@needs_viewer
@pytest.mark.skipif(not CARTPOLE.exists(), reason=f"shared cartpole absent ({CARTPOLE})")
def test_vecenv_record_env(tmp_path):
    page = tmp_path / "cart.html"
    env = talus.VecEnv("cartpole", 4, num_threads=1, seed=3, record_env=2, record_path=page)
    env.reset(seed=3)
    for _ in range(100):
        env.step(np.zeros((4, 1)))
    assert env.recording.nframe > 50
    env.save_recording(tmp_path / "early.html")
    env.close()
    assert page.stat().st_size > 100_000 and (tmp_path / "early.html").exists()
    with pytest.raises(ValueError, match="record_env"):
        talus.VecEnv("cartpole", 2, record_env=5)


@pytest.mark.skipif(talus.have_viewer, reason="this build has the web viewer")
def test_record_without_viewer(tmp_path):
    w, _ = standing_world()
    with pytest.raises(talus.Error, match="without the web viewer"):
        w.record(tmp_path / "run.html")
    assert not (tmp_path / "run.html").exists()
    with w.record(csv=tmp_path / "run.csv"):  # the CSV needs no viewer
        w.step(10)
    assert (tmp_path / "run.csv").exists()


def test_unclosed_recording_whose_write_fails_is_reported_not_fatal(tmp_path):
    # A recording left open is written when collected; if that write fails (here its folder is gone),
    # the error is reported as unraisable and the interpreter goes on (it used to free the Recording
    # twice and crash). Run in a child so a crash fails this test instead of killing pytest.
    script = textwrap.dedent(f"""
        import os, sys
        import talus
        seen = []
        sys.unraisablehook = lambda u: seen.append(str(u.exc_value))
        w = talus.World()
        w.add_ground()
        folder = {str(tmp_path / "gone")!r}
        os.mkdir(folder)
        rec = w.record(csv=os.path.join(folder, "run.csv"))
        w.step(5)
        os.rmdir(folder)
        del rec
        try:
            raise KeyError("pending")  # and while an exception is being handled
        except KeyError:
            os.mkdir(folder)
            rec = w.record(csv=os.path.join(folder, "run.csv"))
            os.rmdir(folder)
            del rec
        assert len(seen) == 2 and all("run.csv" in m for m in seen), seen
        print("ok")
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (proc.returncode, proc.stderr[-2000:])


# --------------------------------------------------------------------- engines


def plugin_built(name):
    return (build_dir() / "plugins" / f"talus-engine-{name}.so").exists()


@pytest.mark.parametrize("engine", ["ode", "mujoco"])
def test_world_engine_free_fall(engine):
    if not plugin_built(engine):
        pytest.skip(f"plugin talus-engine-{engine} not built")
    zs = {}
    for eng in ("talus", engine):
        m = talus.Model.from_urdf(str(BALL), floating_base=True)
        w = talus.World(engine=eng)
        assert w.engine == eng
        s = w.add_system(m)
        q = m.default_q.copy()
        q[2] = 2.0
        s.q = q
        w.step(300)  # 0.3 s of free fall, no contact
        zs[eng] = s.q[2]
    expected = 2.0 - 0.5 * 9.81 * 0.3 * 0.3
    assert abs(zs["talus"] - expected) < 5e-3  # semi-implicit Euler's O(dt) error
    assert abs(zs[engine] - zs["talus"]) < 1e-9


def test_world_engine_errors():
    with pytest.raises(talus.Error, match="nosuchengine"):
        talus.World(engine="nosuchengine")
    w = talus.World.from_file(str(ROBOTS / "worlds" / "boxes_and_balls.xml"))
    assert w.engine == "talus"


# ------------------------------------------------------------------- snapshots


def test_snapshot_replays_bit_for_bit():
    w, s = standing_world()
    w.step(200)
    snap = w.snapshot_save()
    assert isinstance(snap, bytes) and len(snap) > 100
    w.step(300)
    q, u, t = s.q.copy(), s.u.copy(), w.time
    w.snapshot_restore(snap)
    assert w.time == pytest.approx(0.2)
    w.step(300)
    assert np.array_equal(q, s.q) and np.array_equal(u, s.u) and w.time == t
    fresh, fs = standing_world()  # restored into another world built the same way
    fresh.snapshot_restore(snap)
    fresh.step(300)
    assert np.array_equal(q, fs.q)


def test_snapshot_of_another_model_is_refused():
    w, s = standing_world()
    other = talus.World()
    other.add_system(talus.Model.from_urdf(str(BALL), floating_base=True))
    before = other.snapshot_save()
    with pytest.raises(talus.Error, match="another"):
        other.snapshot_restore(w.snapshot_save())
    assert other.snapshot_save() == before
    with pytest.raises(talus.Error, match="snapshot"):
        w.snapshot_restore(b"not a snapshot")
    with pytest.raises(TypeError):
        w.snapshot_restore("text")


def test_snapshot_old_names_are_aliases():
    """get_state / set_state (before issue 22) still save and restore the same bytes."""
    w, s = standing_world()
    w.step(100)
    snap = w.snapshot_save()
    assert w.get_state() == snap
    w.step(100)
    q, u = s.q.copy(), s.u.copy()
    w.set_state(snap)
    assert w.snapshot_save() == snap
    w.step(100)
    assert np.array_equal(q, s.q) and np.array_equal(u, s.u)
