# Guards: python/src/py_sweep.c, python/talus/sweep.py, src/sweep/.
"""talus.sweep: the sweep runner of `talus sweep` from Python (docs/sweeps.md).

- the rows come back as NumPy arrays (one per CSV column, sample order) and, written with out=,
  are byte for byte the CSV of the command line for the same settings;
- a parameter's values are NumPy's Philox4x64 stream keyed by (seed, sample), its block range
  starting at counter word 2 = its position + 1: uniform:LO:HI = LO + (HI - LO) (word >> 11) 2^-53;
- 1 and 2 threads give identical arrays; resume=True with the same out= runs nothing again;
- a bad parameter raises talus.Error naming it before any sample runs; the summary is there.
"""
import os
import subprocess

import numpy as np
import pytest

import talus

from conftest import ROBOTS, build_dir

QUAD = str(ROBOTS / "talus_quadruped" / "talus_quadruped.urdf")
SETTINGS = dict(controller="trot:speed=0.5", duration=1.0, samples=12, seed=5,
                params={"friction": "uniform:0.05:1.0", "mass_scale": "normal:1:0.1", "push": "uniform:0:200"})


def test_arrays_and_cli(tmp_path):
    out = tmp_path / "py.csv"
    r = talus.sweep(QUAD, threads=2, out=out, **SETTINGS)
    assert isinstance(r, talus.SweepResult) and r.complete and r.samples == 12 and r.ran == 12
    assert r["sample"].dtype == np.int64 and list(r["sample"]) == list(range(12))
    for name in ("friction", "mass_scale", "push", "push_time", "push_angle", "mean_speed", "distance"):
        assert r[name].dtype == np.float64 and r[name].shape == (12,)
    assert set(r["status"]) <= {"ok", "fell", "diverged", "error"}
    assert r.summary["success"]["successes"] == int(r.success.sum())
    assert np.all((r["friction"] >= 0.05) & (r["friction"] < 1.0))
    cli = build_dir() / "talus"
    if not cli.exists():
        pytest.skip(f"the talus command is not built at {cli}")
    args = [str(cli), "sweep", QUAD, "--controller", "trot:speed=0.5", "--duration", "1", "--samples", "12",
            "--seed", "5", "--param", "friction=uniform:0.05:1.0", "--param", "mass_scale=normal:1:0.1",
            "--param", "push=uniform:0:200", "--out", str(tmp_path / "cli.csv"), "--quiet"]
    subprocess.run(args, check=True, capture_output=True)
    assert (tmp_path / "cli.csv").read_bytes() == out.read_bytes()


def test_philox_stream():
    r = talus.sweep(QUAD, controller="none", duration=0.01, samples=6, seed=123,
                    params=["friction=uniform:0.2:0.9", "kp_scale=uniform:1:3"])
    for i in range(6):
        for slot, (name, lo, hi) in enumerate((("friction", 0.2, 0.9), ("kp_scale", 1.0, 3.0))):
            gen = np.random.Philox(key=[123, i], counter=[0, 0, slot + 1, 0])
            word = int(gen.random_raw())
            want = lo + (hi - lo) * ((word >> 11) * 2.0 ** -53)
            assert r[name][i] == want, (name, i)


def test_threads_and_resume(tmp_path):
    a = talus.sweep(QUAD, threads=1, **SETTINGS)
    b = talus.sweep(QUAD, threads=2, out=tmp_path / "r.csv", **SETTINGS)
    for name in a.columns:
        if name in ("seed", "spec"):
            continue
        assert np.array_equal(a[name], b[name], equal_nan=a[name].dtype.kind == "f"), name
    c = talus.sweep(QUAD, threads=2, out=tmp_path / "r.csv", resume=True, **SETTINGS)
    assert c.ran == 0 and np.array_equal(c["mean_speed"], b["mean_speed"], equal_nan=True)


def test_errors(tmp_path):
    with pytest.raises(talus.Error, match="parameter mass_scale: mass_scale must be > 0"):
        talus.sweep(QUAD, params={"mass_scale": "uniform:-1:1"}, out=tmp_path / "e.csv")
    with pytest.raises(talus.Error, match="friction must be >= 0"):
        talus.sweep(QUAD, params={"friction": -0.5})
    with pytest.raises(talus.Error, match="no link 'NOPE'"):
        talus.sweep(QUAD, params={"mass_scale@NOPE": 1.1})
    assert not os.path.exists(tmp_path / "e.csv")
    with pytest.raises(TypeError):
        talus.sweep(QUAD, params=["friction"])


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "s.png"
    talus.sweep(QUAD, duration=0.2, samples=4, params={"friction": "uniform:0.2:1"}, plot=png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
