# Guards: python/src/py_constraint.c (World.add_constraint, constraint, constraints, project_constraints) and
# the World methods table in python/src/py_world.c; the URDF <loop_joint> and world-file <constraint> loops as
# seen from Python (issue 23).
"""Loop constraints from Python: declared, read back, projected, kept closed while stepping."""
import numpy as np
import pytest

import talus
from conftest import ROBOTS

PENDULUM = str(ROBOTS / "double_pendulum" / "double_pendulum.urdf")
FOUR_BAR = str(ROBOTS / "four_bar" / "four_bar_loop.urdf")
FIVEBAR = str(ROBOTS / "worlds" / "fivebar_stand.xml")


def pinned_pendulum():
    """A double pendulum (two 0.5 m rods about y, joint1 at the origin) whose tip is pinned by a ball
    to the world point (0.5, 0, -0.5): with the ground it makes a triangle of 0.5 m sides, a rigid
    structure. The start pose q = 0 hangs straight down, 0.707 m from the pin."""
    w = talus.World()
    s = w.add_system(talus.Model.from_urdf(PENDULUM))
    k = w.add_constraint("ball", "link2", point1=(0, 0, -0.5), body2="world", point2=(0.5, 0, -0.5), system=s,
                         name="pin")
    return w, s, k


def test_add_and_read_back():
    w, s, k = pinned_pendulum()
    assert k == 0
    c = w.constraint(0)
    assert c["name"] == "pin" and c["type"] == "ball" and c["nrow"] == 3
    assert c["system1"] == 0 and c["body1"] == "link2" and c["system2"] == -1 and c["body2"] == "world"
    # tip at (0, 0, -1), pin at (0.5, 0, -0.5): |(-0.5, 0, -0.5)|
    assert c["position_error"] == pytest.approx(np.sqrt(0.5), abs=1e-15)
    assert c["angle_error"] == 0.0
    assert c["force"].shape == (3,) and np.all(c["force"] == 0) and np.all(c["torque"] == 0)
    assert w.constraint("pin")["index"] == 0 and w.constraint(-1)["name"] == "pin"
    assert [d["name"] for d in w.constraints()] == ["pin"]


def test_project_closes_the_triangle_and_it_holds():
    w, s, _ = pinned_pendulum()
    w.project_constraints()
    assert w.constraint(0)["position_error"] < 1e-12
    p, R = s.body_pose("link2")
    assert np.allclose(p + R @ np.array([0, 0, -0.5]), [0.5, 0, -0.5], atol=1e-12)
    q0 = s.q.copy()
    w.step(1000)  # rigid: gravity is carried by the pin and the base joint
    c = w.constraint(0)
    assert np.max(np.abs(s.q - q0)) < 1e-6 and c["position_error"] < 1e-9
    assert np.linalg.norm(c["force"]) > 1.0, "the pin carries load"


def test_four_bar_projected_then_moves_closed():
    w = talus.World()
    s = w.add_system(talus.Model.from_urdf(FOUR_BAR))
    q = s.q.copy()
    q[0] += 0.2  # turn the crank alone: the pin opens
    s.set_state(q, s.u)
    assert w.constraint("pin_B")["position_error"] > 1e-3
    w.project_constraints(tol=1e-12, max_iter=50)
    assert w.constraint("pin_B")["position_error"] < 1e-12
    q0 = s.q.copy()
    w.step(1000)  # 1 s under gravity: the crank-rocker swings
    c = w.constraint("pin_B")
    assert np.max(np.abs(s.q - q0)) > 0.05, "the closed linkage moves"
    assert c["position_error"] < 1e-9 and c["angle_error"] < 1e-9
    assert np.linalg.norm(c["force"]) > 0.01


def test_project_refuses_an_unreachable_pin():
    w = talus.World()
    s = w.add_system(talus.Model.from_urdf(PENDULUM))
    w.add_constraint("ball", "link2", point1=(0, 0, -0.5), point2=(3, 0, 0))  # 3 m away, the arm reaches 1 m
    q = s.q.copy()
    with pytest.raises(talus.Error):
        w.project_constraints(max_iter=20)
    assert np.array_equal(s.q, q), "the state is left unchanged"


def test_bad_declarations():
    w = talus.World()
    s = w.add_system(talus.Model.from_urdf(PENDULUM))
    with pytest.raises(talus.Error, match="no link 'link9'"):
        w.add_constraint("ball", "link9")
    with pytest.raises(talus.Error, match="cannot be constrained to itself"):
        w.add_constraint("weld", "link1", body2="link1", system2=s)
    with pytest.raises(talus.Error, match="axis"):
        w.add_constraint("hinge", "link2", axis=(0, 0, 0))
    with pytest.raises(talus.Error, match="no system 3"):
        w.add_constraint("ball", "link2", system=3)
    with pytest.raises(ValueError, match="type"):
        w.add_constraint("slider", "link2")
    with pytest.raises(ValueError, match="distance"):
        w.add_constraint("ball", "link2", distance=0.3)
    with pytest.raises(ValueError, match="point1"):
        w.add_constraint("ball", "link2", point1=(0, 0))
    w.add_constraint("distance", "link2", point1=(0, 0, -0.5), point2=(0, 0, -1.5), min=0.1, max=0.6, name="rope")
    with pytest.raises(talus.Error, match="already used"):
        w.add_constraint("ball", "link2", name="rope")
    assert [c["name"] for c in w.constraints()] == ["rope"], "refused declarations add nothing"
    with pytest.raises(KeyError):
        w.constraint("nope")


def test_urdf_loop_joint_and_world_file():
    w = talus.World()
    w.add_system(talus.Model.from_urdf(FOUR_BAR))
    (c,) = w.constraints()
    assert c["name"] == "pin_B" and c["type"] == "hinge" and c["nrow"] == 5
    assert c["body1"] == "coupler_link" and c["body2"] == "rocker_link"
    assert c["position_error"] < 1e-12 and c["angle_error"] < 1e-12
    w = talus.World.from_file(FIVEBAR)
    names = [c["name"] for c in w.constraints()]
    assert names == ["foot_front_left", "foot_front_right", "foot_back_left", "foot_back_right"]
    w.step(500)
    base = w.systems[0].q[2]
    assert base > 0.24
    assert max(c["position_error"] for c in w.constraints()) < 1e-9
