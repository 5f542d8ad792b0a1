# Guards: python/src/py_world.c, python/src/py_batch.c, python/src/py_record.c, src/base/limits.c
# (one validator per quantity).
"""Issue 21 §2: Python takes the library's one validator per quantity (talus/limits.h) and the
command line's output-name rules: World(dt=1e-320), World(dt=1e300), BatchWorld(dt=1e300) and
setting world.dt out of range are refused like --dt; World.record(path="x.txt") is refused like
--record x.txt, csv="x.txt" like --csv x.txt."""
import pytest

import talus
from conftest import ROBOTS

PENDULUM = str(ROBOTS / "pendulum" / "pendulum.urdf")


@pytest.mark.parametrize("dt", [1e-320, 1e-13, 1e300, 2.0])
def test_world_dt_out_of_range_refused(dt):
    with pytest.raises(talus.Error, match="time step"):
        talus.World(dt=dt)


def test_world_dt_setter_refused():
    w = talus.World(dt=1e-3)
    with pytest.raises(talus.Error, match="time step"):
        w.dt = 1e-300
    assert w.dt == 1e-3


@pytest.mark.parametrize("dt", [1e300, 1e-320])
def test_batchworld_dt_out_of_range_refused(dt):
    with pytest.raises(talus.Error, match="time step"):
        talus.BatchWorld(PENDULUM, 2, num_threads=1, dt=dt)


def test_batchworld_dt_in_range_accepted():
    b = talus.BatchWorld(PENDULUM, 2, num_threads=1, dt=2e-3)
    assert b.dt == 2e-3


def test_record_refuses_non_html_name(tmp_path):
    w = talus.World()
    w.add_system(talus.Model.from_urdf(PENDULUM))
    with pytest.raises(ValueError, match=r"\.html"):
        w.record(path=str(tmp_path / "x.txt"))
    with pytest.raises(ValueError, match=r"\.csv"):
        w.record(csv=str(tmp_path / "x.txt"))
    assert not (tmp_path / "x.txt").exists()
