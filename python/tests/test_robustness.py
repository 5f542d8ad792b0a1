# Guards: the argument handling of python/src/*.c and python/talus/*.py (hostile arguments raise,
# never crash).
"""No input from Python crashes the interpreter: every method and property of Model, World,
System, BatchWorld and VecEnv called with hostile arguments (None, strings, NaN, Inf, huge and
negative numbers, wrong shapes, empty and 0-d arrays, nested lists, objects) raises a Python
exception or works; the calls run in a child interpreter, so a crash fails the test instead of
killing pytest."""
import subprocess
import sys
import textwrap

from conftest import ROBOTS, SHARED_ROBOTS

FUZZ = textwrap.dedent("""
    import itertools, sys
    import numpy as np
    import talus

    QUAD = sys.argv[1]
    SHARED = sys.argv[2]
    values = [None, "x", "", b"\\x00", -1, 0, 1, 2**63, -2**63, 2**70, 1e308, float("nan"), float("inf"),
              -float("inf"), [], [[]], [1.0], [[1.0, 2.0], [3.0]], np.zeros(0), np.zeros(()), np.zeros(3),
              np.full(19, np.nan), np.zeros((2, 19)), np.zeros(18, dtype=np.float32), np.zeros(19, dtype=complex),
              np.array(["a"] * 19), object(), {"a": 1}, True, 7]
    ok_errors = (TypeError, ValueError, OverflowError, talus.Error, RuntimeError, IndexError, KeyError,
                 MemoryError)
    calls = 0

    def hammer(obj):
        global calls
        for name in dir(obj):
            if name.startswith("_") or name in ("close",):
                continue
            try:
                attr = getattr(obj, name)
            except ok_errors:
                continue
            if not callable(attr):
                for v in values[:12]:
                    try:
                        setattr(obj, name, v)
                    except (AttributeError,) + ok_errors:
                        pass
                continue
            for n in range(0, 4):
                for args in itertools.islice(itertools.product(values, repeat=n), 400):
                    calls += 1
                    try:
                        attr(*args)
                    except ok_errors:
                        pass

    model = talus.Model.from_urdf(QUAD)
    world = talus.World()
    world.add_ground()
    sys_ = world.add_system(model)
    batch = talus.BatchWorld(QUAD, 3, num_threads=2)
    for obj in (model, world, sys_, batch):
        hammer(obj)
    for v in values:
        for ctor in (lambda: talus.Model.from_urdf(v), lambda: talus.Model.from_urdf_string(v),
                     lambda: talus.World(dt=v), lambda: talus.BatchWorld(v, 2), lambda: talus.BatchWorld(QUAD, v),
                     lambda: talus.VecEnv("cartpole", v), lambda: talus.VecEnv(v, 2),
                     lambda: talus.VecEnv("cartpole", 2, num_threads=v), lambda: talus.VecEnv("cartpole", 2, seed=v),
                     lambda: talus.VecEnv("urdf", 2, urdf=v), lambda: talus.VecEnv("cartpole", 2, mass_scale=v)):
            calls += 1
            try:
                ctor()
            except ok_errors:
                pass
    import os
    if os.path.exists(SHARED + "/cartpole/cartpole.urdf"):
        env = talus.VecEnv("cartpole", 2, num_threads=2, robots_dir=SHARED)
        env.reset()
        for v in values:
            for call in (lambda: env.step(v), lambda: env.reset(seed=v), lambda: env.reset(options=v)):
                calls += 1
                try:
                    call()
                except ok_errors:
                    pass
    print("calls", calls)
""")


def test_hostile_arguments_never_crash(tmp_path):
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    quad = str(ROBOTS / "talus_quadruped" / "talus_quadruped.urdf")
    proc = subprocess.run([sys.executable, str(script), quad, str(SHARED_ROBOTS)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"the interpreter died (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    calls = int(proc.stdout.split("calls")[-1])
    assert calls > 5000, proc.stdout
