# Guards: python/src/convert.c (talus.Error, shape and dtype errors), the constructors of
# python/src/py_*.c.
"""Errors: talus.Error with the C message, file and line; ValueError naming the expected shape
for wrong shapes and dtypes; bad arguments of every constructor."""
import numpy as np
import pytest

import talus
from conftest import ROBOTS

QUADRUPED = str(ROBOTS / "talus_quadruped" / "talus_quadruped.urdf")

BAD_URDF = """<?xml version="1.0"?>
<robot name="bad">
  <link name="base">
    <inertial>
      <mass value="-2.0"/>
      <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
</robot>
"""


def test_error_is_runtime_error():
    assert issubclass(talus.Error, RuntimeError)


def test_bad_urdf_file_names_file_and_line(tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text(BAD_URDF)
    with pytest.raises(talus.Error) as info:
        talus.Model.from_urdf(str(path))
    e = info.value
    assert e.file == str(path) and e.line == 5, (e.file, e.line)
    assert f"{path}:5:" in str(e) and "mass" in str(e)
    assert e.status == "invalid input"


def test_malformed_xml_and_missing_file(tmp_path):
    path = tmp_path / "broken.urdf"
    path.write_text("<robot name='x'>\n<link name='a'>\n</robot>\n")
    with pytest.raises(talus.Error) as info:
        talus.Model.from_urdf(path)  # a pathlib.Path works too
    assert info.value.file == str(path) and info.value.line >= 2 and info.value.status == "parse error"
    with pytest.raises(talus.Error) as info:
        talus.Model.from_urdf(str(tmp_path / "nope.urdf"))
    assert info.value.status == "i/o error" and "nope.urdf" in str(info.value)
    with pytest.raises(talus.Error) as info:
        talus.Model.from_urdf_string("<robot name='x'><link name='a'/><joint name='j' type='revolute'>"
                                     "<parent link='a'/><child link='b'/></joint></robot>", name="inline.urdf")
    assert info.value.file == "inline.urdf" and info.value.line == 1 and "'b'" in str(info.value)


@pytest.fixture
def quadruped():
    world = talus.World()
    world.add_ground()
    return world, world.add_system(talus.Model.from_urdf(QUADRUPED))


def test_shape_errors_name_the_expected_shape(quadruped):
    world, sys = quadruped
    with pytest.raises(ValueError, match=r"q: expected shape \(19,\), got \(18,\)"):
        sys.set_state(np.zeros(18))
    with pytest.raises(ValueError, match=r"u: expected shape \(18,\), got \(3, 6\)"):
        sys.set_state(sys.q, np.zeros((3, 6)))
    with pytest.raises(ValueError, match=r"tau: expected shape \(18,\)"):
        sys.set_generalized_force([1.0, 2.0])
    with pytest.raises(ValueError, match=r"kp: expected shape \(18,\) \(or one that broadcasts to it\), got \(5,\)"):
        sys.set_pd_gains(np.ones(5), 1.0)
    with pytest.raises(ValueError, match=r"q_ref: expected shape \(19,\)"):
        sys.set_pd_targets(np.zeros((19, 1)))
    with pytest.raises(ValueError, match=r"gravity: expected shape \(3,\)"):
        talus.World(gravity=(0, 9.81))


def test_dtype_errors(quadruped):
    world, sys = quadruped
    for bad, what in [(np.zeros(19, dtype=complex), "complex128"), (np.array(["a"] * 19), "<U1"),
                      (np.zeros(19, dtype=bool), "bool"), ([None] * 19, "object")]:
        with pytest.raises(ValueError, match=rf"q: expected a float64 array of shape \(19,\), got dtype {what}"):
            sys.q = bad
    # None is zero (issue 21), but an array of None is still not numbers
    with pytest.raises(ValueError, match="got dtype object"):
        sys.set_generalized_force([None] * 18)
    # integers and float32 are numbers: accepted (converted to float64)
    q = sys.q
    sys.q = q.astype(np.float32)
    sys.set_pd_gains(np.arange(18), 1)


def test_bad_values_raise_talus_error(quadruped):
    world, sys = quadruped
    q = sys.q
    q[5] = np.nan
    with pytest.raises(talus.Error, match="finite"):
        sys.q = q
    q = sys.q
    q[3:7] = 0
    with pytest.raises(talus.Error, match="quaternion"):
        sys.q = q
    with pytest.raises(talus.Error, match="negative"):
        sys.set_pd_gains(-np.ones(18), np.ones(18))
    with pytest.raises(talus.Error):
        world.dt = -1.0
    with pytest.raises(ValueError, match="no frame or link named 'nope'"):
        sys.frame_pose("nope")
    with pytest.raises(ValueError, match="frame: expected"):
        sys.frame_jacobian(10 ** 6)
    with pytest.raises(talus.Error, match="no link named"):
        sys.link_inertial("nope")


def test_constructors_refuse_bad_arguments(cartpole_urdf):
    with pytest.raises(TypeError):
        talus.Model()
    with pytest.raises(TypeError):
        talus.System()
    with pytest.raises(ValueError, match="num_envs"):
        talus.VecEnv("cartpole", 0)
    with pytest.raises(ValueError, match="num_threads"):
        talus.VecEnv("cartpole", 2, num_threads=0)
    with pytest.raises(ValueError, match="seed"):
        talus.VecEnv("cartpole", 2, seed=-1)
    with pytest.raises(ValueError, match="seed"):
        talus.VecEnv("cartpole", 2, seed=2 ** 64)
    with pytest.raises(talus.Error, match="unknown task 'walker'"):
        talus.VecEnv("walker", 2)
    with pytest.raises(talus.Error, match=r"no option 'mass_scal'.*mass_scale"):
        talus.VecEnv("cartpole", 2, mass_scal=1.0)
    with pytest.raises(talus.Error, match="force_scale"):
        talus.VecEnv("cartpole", 2, force_scale="lots")
    with pytest.raises(TypeError, match="task option"):
        talus.VecEnv("cartpole", 2, force_scale={"a": 1})
    with pytest.raises(talus.Error, match="urdf=PATH"):
        talus.VecEnv("urdf", 2)
    with pytest.raises(ValueError, match="num_envs"):
        talus.BatchWorld(QUADRUPED, 0)
    with pytest.raises(talus.Error, match="nope.urdf"):
        talus.BatchWorld("/nonexistent/nope.urdf", 2)


def test_missing_robot_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("TALUS_SHARED_ROBOTS", str(tmp_path / "empty"))
    with pytest.raises(talus.Error) as info:
        talus.VecEnv("anymal-locomotion", 1, robots_dir=str(tmp_path / "also_empty"))
    msg = str(info.value)
    assert "anymal_c/urdf/anymal.urdf" in msg and str(tmp_path / "empty") in msg and "also_empty" in msg
    assert info.value.status == "i/o error"


def test_vecenv_action_errors(cartpole_urdf):
    env = talus.VecEnv("cartpole", 4, num_threads=1)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions: expected shape \(4, 1\), got \(3, 1\)"):
        env.step(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="got dtype"):
        env.step(np.array([["x"]] * 4))
    env.step(np.zeros(4))  # (num_envs,) is accepted when act_dim is 1
    env.step(np.zeros((4, 1), dtype=np.int64))
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=[1, 2])
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros((4, 1)))


def test_batch_errors_name_env_and_index():
    bw = talus.BatchWorld(QUADRUPED, 3, num_threads=2)
    q = np.array(bw.q)
    q[2, 9] = np.inf
    with pytest.raises(talus.Error, match=r"q\[2, 9\]"):
        bw.set_state(q)
    with pytest.raises(ValueError, match=r"q: expected shape \(3, 19\)"):
        bw.set_state(q[:2])
    with pytest.raises(ValueError, match="read-only"):
        bw.q[0, 0] = 1.0
