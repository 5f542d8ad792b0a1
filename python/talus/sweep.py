"""Dynamics-randomization sweeps from Python: ``talus.sweep(...)``, the same runner as
``talus sweep`` (docs/sweeps.md), on the threads of this machine.

    import talus
    r = talus.sweep("robots/talus_quadruped/talus_quadruped.urdf", controller="trot:speed=0.5",
                    duration=5, samples=200, seed=1,
                    params={"friction": "uniform:0.2:1.0", "mass_scale": "normal:1:0.1"})
    r["friction"], r["status"], r["mean_speed"]     # one NumPy array per CSV column
    r.success.mean(), r.summary["success"]["wilson95"]

Every keyword is a setting of the sweep, as text, exactly as the command line's --options;
the C library checks them (talus.Error naming the parameter, before any sample runs).
"""
import json
import os
import tempfile

import numpy as np

from . import _talus
from .sweep_plot import plot as _plot

_KEYS = ("controller", "duration", "dt", "samples", "seed", "fall_height", "fall_tilt", "base", "kp", "kd",
         "ground_friction", "terrain_size", "terrain_spacing", "worst")


def _text(value):
    if isinstance(value, bool):
        raise TypeError("expected a number or a string, got a bool")
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back to the same double
    return str(value)


def _params(params):
    if params is None:
        return []
    if isinstance(params, str):
        params = [params]
    if isinstance(params, dict):
        return [f"{name}={_text(dist)}" for name, dist in params.items()]
    out = []
    for p in params:
        if not isinstance(p, str) or "=" not in p:
            raise TypeError(f"params: expected 'NAME=DISTRIBUTION' strings or a dict, got {p!r}")
        out.append(p)
    return out


class SweepResult(dict):
    """The rows of a sweep: one NumPy array per CSV column, in sample order.

    Keys: ``sample`` (int64), each parameter column (float64), ``status`` (str: ok, fell, diverged,
    error), each outcome (float64, NaN where undefined), ``message`` (str). Attributes: ``columns``
    (the CSV's), ``summary`` (the summary JSON as a dict), ``complete`` (every sample has a row),
    ``seed``, ``spec`` (the sweep's hash), ``samples``, ``ran`` (rows run by this call), ``csv``.
    """

    @property
    def success(self):
        """Boolean array: status == "ok"."""
        return self["status"] == "ok"

    def __repr__(self):
        n = len(self["sample"])
        return (f"SweepResult({n} rows of {self.samples}, success {int(self.success.sum())}/{n}, "
                f"columns {self.columns})")


def sweep(robot=None, *, spec=None, params=None, controller=None, duration=None, dt=None, samples=None,
          seed=None, threads=None, out=None, summary=None, plot=None, resume=False, fall_height=None,
          fall_tilt=None, base=None, q=None, var=None, kp=None, kd=None, ground_friction=None,
          terrain_size=None, terrain_spacing=None, worst=None, progress=False):
    """Run a dynamics-randomization sweep and return its rows as NumPy arrays.

    robot     URDF or world file (or give ``spec``, a sweep file; keywords override it)
    params    {"friction": "uniform:0.2:1.0", "mass_scale@LF_SHANK": "normal:1:0.1", ...}, or a
              list of "NAME=DIST" strings; distributions: a number, uniform:LO:HI, normal:MEAN:STD,
              loguniform:LO:HI, choice:A,B,C, grid:LO:HI:N
    controller  "stand" (default), "trot:speed=0.5", "impedance", "osc:radius=0.1", "none"
    duration, dt, samples, seed, fall_height, fall_tilt, base ("auto", "floating", "fixed"),
    q (sequence), var ({name: value}), kp, kd, ground_friction, terrain_size, terrain_spacing,
    worst: as the command line's options (docs/sweeps.md)
    threads   threads running samples (None: every CPU); the rows never depend on it
    out       write the CSV there (and keep its rows: resume=True runs only the missing samples)
    summary   write the summary JSON there (``result.summary`` has it either way)
    plot      draw success and speed against each parameter into this PNG / SVG / PDF (matplotlib)
    progress  print progress on stderr

    Raises talus.Error for a bad setting (naming it) before any sample runs; KeyboardInterrupt
    after Ctrl-C (the finished rows are in ``out``).
    """
    settings = []
    if robot is not None:
        settings.append(("robot", os.fspath(robot)))
    local = dict(controller=controller, duration=duration, dt=dt, samples=samples, seed=seed,
                 fall_height=fall_height, fall_tilt=fall_tilt, base=base, kp=kp, kd=kd,
                 ground_friction=ground_friction, terrain_size=terrain_size, terrain_spacing=terrain_spacing,
                 worst=worst)
    for key in _KEYS:
        if local[key] is not None:
            settings.append((key, _text(local[key])))
    if q is not None:
        settings.append(("q", ",".join(_text(float(v)) for v in q)))
    for name, value in (var or {}).items():
        settings.append(("var", f"{name}={_text(float(value))}"))
    settings += [("param", p) for p in _params(params)]
    with tempfile.TemporaryDirectory(prefix="talus-sweep-") as tmp:
        csv = os.fspath(out) if out is not None else (os.path.join(tmp, "sweep.csv") if plot else None)
        summary_path = os.fspath(summary) if summary is not None else os.path.join(tmp, "summary.json")
        rows = _talus._sweep(settings, os.fspath(spec) if spec is not None else None, threads, csv,
                             summary_path, bool(resume), bool(progress))
        with open(summary_path) as f:
            summary_dict = json.load(f)
        if plot:
            _plot(csv, os.fspath(plot), os.path.basename(summary_dict.get("robot", "sweep")))
    result = SweepResult()
    result.columns = rows.pop("columns")
    for key in ("complete", "seed", "spec", "samples", "ran"):
        setattr(result, key, rows.pop(key))
    result.csv = os.fspath(out) if out is not None else None
    result.summary = summary_dict
    for name in result.columns:
        if name in ("seed", "spec"):
            continue
        value = rows[name]
        result[name] = np.array(value, dtype=str) if isinstance(value, list) else value
    return result
