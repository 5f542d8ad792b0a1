# Guards: python/src/py_system.c, python/src/py_model.c (frames by link name, None as zero, contact
# wrenches), src/world/system_query.c.
"""Issue 21 (simulate), section 5: the controller developer's paper cuts in Python.

- frames by URDF link name as well as joint name; an unknown name is a ValueError naming it;
- None means zero for optional velocity targets and force vectors;
- per-body and per-frame contact wrenches: a box and a quadruped resting on the ground carry
  their weight (sum of the body wrenches = m g), the torques agree with the forces
  (moving the reference point by d changes the torque by -d x F), and a resting box's
  contact torque about its centre is ~0.
"""
import numpy as np
import pytest

import talus
from conftest import ROBOTS

QUAD = ROBOTS / "talus_quadruped" / "talus_quadruped.urdf"
BOX = ROBOTS / "box" / "box.urdf"
G = 9.81


def standing_quadruped(steps=1500):
    model = talus.Model.from_urdf(str(QUAD))
    world = talus.World(dt=0.001)
    world.add_ground(friction=0.8)
    robot = world.add_system(model)
    q = model.default_q.copy()
    q[2] = 0.6
    robot.set_state(q)
    kp = np.r_[np.zeros(6), np.full(model.nv - 6, 300.0)]
    robot.set_pd_gains(kp, 10.0)
    robot.set_pd_targets(q)
    world.step(steps)
    return model, world, robot


def test_frames_by_link_name():
    model, world, robot = standing_quadruped(steps=1)
    # the link LF_FOOT is the child of the fixed joint LF_shank_to_foot: the same frame
    assert robot.frame_index("LF_FOOT") == robot.frame_index("LF_shank_to_foot")
    p_link, _ = robot.frame_pose("LF_FOOT")
    p_joint, _ = robot.frame_pose("LF_shank_to_foot")
    assert np.array_equal(p_link, p_joint)
    assert robot.frame_jacobian("LF_SHANK").shape == (6, model.nv)
    with pytest.raises(ValueError, match="no frame or link named 'LF_TOE'"):
        robot.frame_pose("LF_TOE")
    with pytest.raises(ValueError, match="LF_TOE"):
        robot.frame_index("LF_TOE")


def test_none_means_zero():
    model, world, robot = standing_quadruped(steps=1)
    robot.set_generalized_force(np.ones(model.nv))
    robot.set_generalized_force(None)
    robot.set_generalized_force()
    q = model.default_q.copy()
    q[2] = 0.6
    robot.set_pd_targets(q, None)
    robot.set_state(q, None)
    assert np.all(robot.u == 0)


def test_box_weight_and_torque():
    model = talus.Model.from_urdf(str(BOX))
    world = talus.World(dt=0.001)
    world.add_ground(friction=0.8)
    box = world.add_system(model)
    q = model.default_q.copy()
    q[2] = 0.3
    box.set_state(q)
    world.step(2000)
    f, t = box.body_contact_wrench(0)
    weight = model.total_mass * G
    assert abs(f[2] - weight) < 1e-3 * weight, (f, weight)
    assert np.hypot(f[0], f[1]) < 1e-6 * weight
    # about the centre of mass the contact forces balance (the box rests still)
    com = box.com()
    f2, t_com = box.body_contact_wrench(0, point=com)
    assert np.array_equal(f, f2)
    assert np.linalg.norm(t_com) < 1e-3 * weight * 0.1, t_com
    # moving the point: t(p2) = t(p1) + (p1 - p2) x F
    p1 = box.body_pose(0)[0]
    p2 = p1 + np.array([0.3, -0.2, 0.1])
    _, t2 = box.body_contact_wrench(0, point=p2)
    assert np.allclose(t2, t + np.cross(p1 - p2, f), atol=1e-9 * weight)
    # per frame: the box's frame is on body 0, torque about its origin
    ff, tf = box.frame_contact_wrench(0)
    pf, _ = box.frame_pose(0)
    _, tp = box.body_contact_wrench(0, point=pf)
    assert np.array_equal(ff, f) and np.array_equal(tf, tp)


def test_quadruped_weight_on_feet():
    model, world, robot = standing_quadruped()
    total = np.zeros(3)
    feet = np.zeros(3)
    for b in range(len(model.body_names)):
        f, _ = robot.body_contact_wrench(b)
        total += f
    for foot in ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"):
        f, t = robot.frame_contact_wrench(foot)
        feet += f
        # a point foot (sphere): the contact acts at the ball, so about the foot frame the
        # torque is r x f with |r| about the sphere radius: bounded by radius * |f|
        assert np.linalg.norm(t) <= 0.05 * np.linalg.norm(f) + 1e-9
    weight = model.total_mass * G
    assert abs(total[2] - weight) < 0.01 * weight, (total, weight)
    assert np.allclose(feet, total)
    with pytest.raises(ValueError):
        robot.body_contact_wrench("no_such_link")


def test_fixed_base_pose():
    """A fixed base is placed where asked (it was welded at the origin: no call moved it)."""
    model = talus.Model.from_urdf(str(QUAD), floating_base=False)
    world = talus.World(dt=0.001)
    world.add_ground(friction=0.8)
    robot = world.add_system(model)
    c, s = np.cos(0.5), np.sin(0.5)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    robot.set_base_pose([1.0, 2.0, 1.5], R)
    robot.set_pd_gains(300.0, 10.0)
    robot.set_pd_targets(robot.q)
    world.step(500)
    p, R0 = robot.body_pose(0)
    assert np.array_equal(p, [1.0, 2.0, 1.5])
    assert np.allclose(R0, R, atol=1e-15)
    assert len(robot.contacts()["depth"]) == 0  # held in the air, nothing touches
    with pytest.raises(talus.Error, match="rotation"):
        robot.set_base_pose([0, 0, 1], np.eye(3) * 2)
