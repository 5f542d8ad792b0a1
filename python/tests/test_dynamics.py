# Guards: python/src/py_system.c, python/src/convert.c (M, h, Jacobians: no arithmetic added),
# src/dynamics/ against ../shared/reference.
"""M, h and frame Jacobians from Python against the C library and independent reference values.

- Reference: every state of the shared reference files (../shared/reference, computed by MuJoCo
  2.2 from the same URDFs in Talus's conventions), relative error max|a - b| / max(1, max|b|)
  below 1e-9 for M, h, g = h(q, 0) and the Jacobians of every body point ('bodies': the joint
  frame of each movable joint's child link).
- C values: `talus dynamics` (the C command line, which prints numbers that read back exactly)
  on the same states gives bit-identical M, h and Jacobians: the bindings add no arithmetic.
"""
import json
import subprocess

import numpy as np
import pytest

import talus
from conftest import SHARED_REFERENCE, SHARED_ROBOTS, build_dir, needs

REFERENCE_FILES = ["cartpole.json", "anymal_c__anymal.json", "kuka_iiwa.json", "solo12.json",
                   "double_pendulum.json", "panda.json"]
TOL = 1e-9


def rel_err(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def load_reference(name):
    path = SHARED_REFERENCE / name
    needs(path, f"reference file {name}")
    ref = json.loads(path.read_text())
    urdf = SHARED_ROBOTS / ref["urdf"]
    needs(urdf, f"robot {ref['urdf']}")
    model = talus.Model.from_urdf(str(urdf), floating_base=ref["base"] == "floating")
    return ref, model, str(urdf)


def system_for(model):
    world = talus.World(gravity=(0, 0, -9.81))
    return world, world.add_system(model)


@pytest.mark.parametrize("name", REFERENCE_FILES)
def test_reference_dynamics(name):
    ref, model, _ = load_reference(name)
    assert model.nq == ref["nq"] and model.nv == ref["nv"]
    assert model.joint_names == ref["joint_names"]
    world, sys = system_for(model)
    worst = {"M": 0.0, "h": 0.0, "g": 0.0, "J": 0.0}
    for state in ref["states"]:
        sys.set_state(np.array(state["q"]), np.array(state["u"]))
        M = sys.mass_matrix()
        assert M.shape == (model.nv, model.nv) and M.dtype == np.float64
        worst["M"] = max(worst["M"], rel_err(M, np.reshape(state["M"], M.shape)))
        worst["h"] = max(worst["h"], rel_err(sys.nonlinear_effects(), state["h"]))
        sys.set_state(np.array(state["q"]), np.zeros(model.nv))
        worst["g"] = max(worst["g"], rel_err(sys.nonlinear_effects(), state["g"]))
        for body in state["bodies"]:
            J = sys.frame_jacobian(body["joint"])
            assert J.shape == (6, model.nv)
            Jref = np.vstack([np.reshape(body["Jp"], (3, -1)), np.reshape(body["Jr"], (3, -1))])
            worst["J"] = max(worst["J"], rel_err(J, Jref))
            p, R = sys.frame_pose(body["joint"])
            assert rel_err(p, body["pos"]) < TOL and rel_err(R, np.reshape(body["R"], (3, 3))) < TOL
    for what, err in worst.items():
        assert err < TOL, f"{name}: {what} relative error {err:.3g}"


@pytest.mark.parametrize("name", ["anymal_c__anymal.json", "kuka_iiwa.json"])
def test_bindings_equal_c_values(name, tmp_path):
    ref, model, urdf = load_reference(name)
    talus_bin = build_dir() / "talus"
    if not talus_bin.exists():
        pytest.skip(f"the talus command is not at {talus_bin} (set TALUS_BUILD_DIR)")
    out = tmp_path / "c.json"
    base = "--floating-base" if ref["base"] == "floating" else "--fixed-base"
    subprocess.run([str(talus_bin), "dynamics", urdf, base, "--states", str(SHARED_REFERENCE / name),
                    "--out", str(out)], check=True, capture_output=True)
    c = json.loads(out.read_text())
    world, sys = system_for(model)
    for state in c["states"]:
        sys.set_state(np.array(state["q"]), np.array(state["u"]))
        assert np.array_equal(sys.mass_matrix().ravel(), np.array(state["M"]))
        assert np.array_equal(sys.nonlinear_effects(), np.array(state["h"]))
        for body in state["bodies"]:
            J = sys.frame_jacobian(body["joint"])
            assert np.array_equal(J[:3].ravel(), np.array(body["Jp"]))
            assert np.array_equal(J[3:].ravel(), np.array(body["Jr"]))


def test_inverse_mass_matrix_and_dynamics(anymal_urdf):
    model = talus.Model.from_urdf(anymal_urdf)
    world, sys = system_for(model)
    rng = np.random.default_rng(1)
    q = model.default_q
    q[3:7] = rng.normal(size=4)
    q[7:] += rng.uniform(-0.3, 0.3, size=12)
    sys.set_state(q, rng.normal(size=model.nv))
    M, Minv = sys.mass_matrix(), sys.inverse_mass_matrix()
    assert np.allclose(M @ Minv, np.eye(model.nv), atol=1e-10)
    tau = rng.normal(size=model.nv)
    du = sys.forward_dynamics(tau)
    assert np.allclose(M @ du + sys.nonlinear_effects(), tau, atol=1e-9)
    assert np.allclose(sys.inverse_dynamics(du), tau, atol=1e-9)


def test_model_properties(anymal_urdf):
    model = talus.Model.from_urdf(anymal_urdf)
    assert model.floating_base and model.nq == 19 and model.nv == 18
    assert model.body_names[0] == "base" and len(model.body_names) == model.nbody == 13
    assert model.frame_names[0] == "ROOT" and len(model.frame_names) == model.nframe
    assert abs(model.total_mass - 52.1348) < 1e-3
    q0 = model.default_q
    lower, upper = model.dof_limits
    assert q0.shape == (19,) and lower.shape == (18,)
    joints, lo, hi = q0[7:], lower[6:], upper[6:]
    assert np.all((joints >= lo) & (joints <= hi)), "default_q outside the joint limits"
    assert np.array_equal(q0[3:7], [1, 0, 0, 0])
    fixed = talus.Model.from_urdf(anymal_urdf, floating_base=False)
    assert not fixed.floating_base and fixed.nq == 12


def test_default_q_inside_limits():
    # a knee whose limits exclude 0: default_q clamps 5 % of the range inside (tl_model_default_q)
    xml = """<robot name="knee"><link name="a"><inertial><mass value="1"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
      </inertial></link><joint name="k" type="revolute"><parent link="a"/><child link="b"/>
      <axis xyz="0 1 0"/><limit lower="-2.8" upper="-0.9" effort="80" velocity="8"/></joint></robot>"""
    model = talus.Model.from_urdf_string(xml, floating_base=False)
    assert model.default_q[0] == pytest.approx(-0.9 - 0.05 * 1.9)
    assert model.reference_q[0] == 0.0
