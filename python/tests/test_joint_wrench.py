# Guards: python/src/py_system.c (System.joint_wrenches), src/native/joint_wrench.c, src/world/system_wrench.c.
"""Issue 23 §3: joint reaction wrenches from Python.

- System.joint_wrenches() is (nbody, 6) float64, rows [f, n] in each child joint frame;
- a fixed-base two-link pendulum hanging at rest (COMs below the joints, offset along the axes): each joint carries the weight below it and the
  moment of the COMs' offset along the axis, the root row the whole weight (1e-9);
- a standing quadruped: the floating root row is 0, the hips carry minus the contact forces less the
  legs' weight, and the revolute rows projected on their axes give the applied generalized force;
- System.frame_wrench across a fixed joint: a payload fixed below the pendulum's link carries its
  weight; the frame of a movable joint gives that joint's row;
- errors: before the first step and after set_state a talus.Error.
"""
import numpy as np
import pytest

import talus
from conftest import ROBOTS

QUAD = ROBOTS / "talus_quadruped" / "talus_quadruped.urdf"
G = 9.81

PENDULUM = """<robot name='p'>
<link name='base'/>
<link name='a'><inertial><mass value='2'/><origin xyz='0 0.1 -0.3'/>
 <inertia ixx='0.02' iyy='0.02' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>
<link name='b'><inertial><mass value='1'/><origin xyz='0 -0.05 -0.2'/>
 <inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>
<joint name='ja' type='continuous'><parent link='base'/><child link='a'/><axis xyz='1 0 0'/></joint>
<joint name='jb' type='continuous'><parent link='a'/><child link='b'/><origin xyz='0 0 -0.6'/><axis xyz='1 0 0'/></joint>
</robot>"""


def test_pendulum_at_rest():
    # COMs straight below the joints (y offsets along nothing): a true equilibrium
    xml = PENDULUM.replace("0 0.1 -0.3", "0.1 0 -0.3").replace("0 -0.05 -0.2", "-0.05 0 -0.2")
    model = talus.Model.from_urdf_string(xml, floating_base=False)
    world = talus.World(dt=0.001)
    robot = world.add_system(model)
    world.step(100)
    w = robot.joint_wrenches()
    assert w.shape == (model.nbody, 6) == (3, 6) and w.dtype == np.float64
    ma, mb = 2.0, 1.0
    # forces: the parent holds the links below up
    np.testing.assert_allclose(w[2, :3], [0, 0, mb * G], atol=1e-9)
    np.testing.assert_allclose(w[1, :3], [0, 0, (ma + mb) * G], atol=1e-9)
    np.testing.assert_allclose(w[0, :3], [0, 0, (ma + mb) * G], atol=1e-9)
    # moments about each joint origin: n = -sum r x (m g) with g = (0, 0, -G): n_y = -r_x m G
    np.testing.assert_allclose(w[2, 3:], [0, 0.05 * mb * G, 0], atol=1e-9)
    np.testing.assert_allclose(w[1, 3:], [0, -0.1 * ma * G + 0.05 * mb * G, 0], atol=1e-9)
    np.testing.assert_allclose(w[0, 3:], w[1, 3:], atol=1e-9)  # massless base, joint a at its origin


def test_standing_quadruped():
    model = talus.Model.from_urdf(str(QUAD))
    world = talus.World(dt=0.001)
    world.add_ground(friction=0.8)
    robot = world.add_system(model)
    q = model.default_q.copy()
    q[2] = 0.6
    robot.set_state(q)
    robot.set_pd_gains(np.r_[np.zeros(6), np.full(model.nv - 6, 300.0)], 10.0)
    robot.set_pd_targets(q)
    world.step(1500)
    q0, u0 = robot.q.copy(), robot.u.copy()
    world.step(1)
    w = robot.joint_wrenches()
    assert w.shape == (model.nbody, 6)
    weight = model.total_mass * G
    assert np.abs(w[0]).max() < 1e-9 * weight  # floating base: nothing through the root joint
    contacts = robot.contacts()
    Fc = contacts["impulse"].sum(axis=0) / world.dt
    assert abs(Fc[2] / weight - 1) < 0.02
    # the hips (children of the base), their forces turned into the world at the step's start
    hips = [model.body_names.index(n) for n in ("LF_HIP", "RF_HIP", "LH_HIP", "RH_HIP")]
    legs = (model.total_mass - robot.link_inertial("base")[0]) * G
    q1, u1 = robot.q.copy(), robot.u.copy()
    robot.set_state(q0, u0)
    total = np.zeros(3)
    for b in hips:
        _, R = robot.body_pose(b)
        total += R @ w[b, :3]
    robot.set_state(q1, u1)
    assert len(hips) == 4
    np.testing.assert_allclose(total, -(Fc - [0, 0, legs]), atol=2e-3 * weight)


def test_frame_wrench_across_a_fixed_joint():
    xml = PENDULUM.replace("0 0.1 -0.3", "0.1 0 -0.3").replace("0 -0.05 -0.2", "-0.05 0 -0.2").replace(
        "</robot>",
        "<link name='payload'><inertial><mass value='0.4'/><origin xyz='0.02 0 -0.03'/>"
        "<inertia ixx='0.001' iyy='0.001' izz='0.001' ixy='0' ixz='0' iyz='0'/></inertial></link>"
        "<joint name='jp' type='fixed'><parent link='b'/><child link='payload'/><origin xyz='0 0 -0.3'/></joint>"
        "</robot>")
    model = talus.Model.from_urdf_string(xml, floating_base=False)
    world = talus.World(dt=0.001)
    robot = world.add_system(model)
    world.step(10)
    f, n = robot.frame_wrench("jp")
    np.testing.assert_allclose(f, [0, 0, 0.4 * G], atol=1e-9)
    np.testing.assert_allclose(n, [0, -0.02 * 0.4 * G, 0], atol=1e-9)
    f, n = robot.frame_wrench("jb")
    np.testing.assert_allclose(np.r_[f, n], robot.joint_wrenches()[2], atol=1e-12)


def test_errors():
    model = talus.Model.from_urdf_string(PENDULUM, floating_base=False)
    world = talus.World(dt=0.001)
    robot = world.add_system(model)
    with pytest.raises(talus.Error, match="no step yet"):
        robot.joint_wrenches()
    world.step(1)
    robot.joint_wrenches()
    robot.set_state(robot.q + 0.1, robot.u)
    with pytest.raises(talus.Error, match="changed since the last step"):
        robot.joint_wrenches()
