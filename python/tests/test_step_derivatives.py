# Guards: python/src/py_world.c (World.step_derivatives), src/world/step_derivatives.c.
"""World.step_derivatives (issue 24 §3): the analytic mode against the centred finite differences on
the project humanoid floating in the air with a small PD (relative error below 1e-4), the mode used
(info=True: "analytic" on the project quadruped standing on four sticking feet, against "fd"),
the world left exactly as it was (its snapshot bytes), B against a step with a changed feedforward
force, shapes, and refusal of a bad mode."""
import numpy as np
import pytest

import talus
from conftest import ROBOTS


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1e-12, float(np.max(np.abs(b)))))


def humanoid_in_air():
    model = talus.Model.from_urdf(str(ROBOTS / "talus_humanoid" / "talus_humanoid.urdf"))
    world = talus.World()
    sys = world.add_system(model)
    rng = np.random.default_rng(7)
    q = model.default_q.copy()
    q[2] = 3.0
    lo, hi = model.dof_limits
    lo, hi = np.where(np.isfinite(lo), lo, -1.0)[6:], np.where(np.isfinite(hi), hi, 1.0)[6:]
    mid, half = 0.5 * (lo + hi), 0.3 * (hi - lo)
    q[7:] = mid + half * rng.uniform(-1, 1, model.nv - 6)
    sys.set_state(q, 0.3 * rng.normal(size=model.nv))
    kp = np.zeros(model.nv)
    kd = np.zeros(model.nv)
    kp[6:], kd[6:] = 5.0, 0.2
    sys.set_pd_gains(kp, kd)
    target = q.copy()
    target[7:] = mid + 0.02 * half * rng.uniform(-1, 1, model.nv - 6)
    sys.set_pd_targets(target)
    return world, sys


def test_analytic_matches_fd_and_world_unchanged():
    world, sys = humanoid_in_air()
    nv = sys.nv
    before = world.snapshot_save()
    A, B, used = world.step_derivatives(mode="analytic", info=True)
    assert used == "analytic"
    assert A.shape == (2 * nv, 2 * nv) and B.shape == (2 * nv, nv) and A.dtype == np.float64
    Af, Bf, used_fd = world.step_derivatives(mode="fd", info=True)
    assert used_fd == "fd"
    assert world.snapshot_save() == before
    assert rel(A, Af) < 1e-4
    assert rel(B, Bf) < 1e-4
    # B predicts the step with a changed feedforward force (first order)
    dtau = np.random.default_rng(3).normal(size=nv)
    dtau[:6] = 0.0  # the base has no actuator
    s = 1e-3
    world.step()
    u0 = sys.u
    world.snapshot_restore(before)
    sys.set_generalized_force(s * dtau)
    world.step()
    du = sys.u - u0
    assert np.linalg.norm(du - s * B[nv:] @ dtau) < 1e-6 * np.linalg.norm(du)
    with pytest.raises(ValueError):
        world.step_derivatives(mode="complex-step")


def test_standing_quadruped_contacts_analytic():
    model = talus.Model.from_urdf(str(ROBOTS / "talus_quadruped" / "talus_quadruped.urdf"))
    world = talus.World()
    world.add_ground()
    sys = world.add_system(model)
    kp = np.zeros(model.nv)
    kd = np.zeros(model.nv)
    kp[6:], kd[6:] = 300.0, 10.0
    sys.set_pd_gains(kp, kd)
    sys.set_pd_targets(sys.q)
    world.step(500)
    assert world.ncontact >= 4
    before = world.snapshot_save()
    A, B, used = world.step_derivatives(info=True)
    assert used == "analytic"
    assert world.snapshot_save() == before
    Af, Bf, used_fd = world.step_derivatives(mode="fd", info=True)
    assert used_fd == "fd"
    assert world.snapshot_save() == before
    assert np.abs(A - Af).max() < 1e-4 * np.abs(Af).max()
    assert np.abs(B - Bf).max() < 1e-4 * np.abs(Bf).max()
