# Guards: python/src/py_model.c, python/src/py_system.c (the derivative bindings),
# src/dynamics/derivatives.c.
"""Analytic derivatives from Python (issue 24): Model.integrate / difference and their Jacobians,
System.inverse_dynamics_derivatives, forward_dynamics_derivatives and frame_placement_derivatives
against central finite differences computed here with NumPy through the bindings (q perturbed with
Model.integrate in the tangent space), on the project quadruped (always) and ANYmal C (shared corpus).
Relative error max|a - b| / max|b| below 1e-6; M and M^-1 to 1e-9; integrate/difference round trips
to 1e-12. Also: the arrays' shapes, dtypes and refusal of wrong shapes; System.passive_force and the
*_passive_derivatives (damping, rotor inertia, world-frame forces at body points) the same way."""
import numpy as np
import pytest

import talus
from conftest import ROBOTS

QUADRUPED = ROBOTS / "talus_quadruped" / "talus_quadruped.urdf"


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1e-9, float(np.max(np.abs(b)))))


def random_state(model, rng):
    q = model.default_q.copy()
    lo, hi = model.dof_limits
    if model.floating_base:
        q[:3] = rng.uniform(-1, 1, 3)
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
        joints_q, joints_v = slice(7, None), slice(6, None)
    else:
        joints_q, joints_v = slice(0, None), slice(0, None)
    lo, hi = lo[joints_v], hi[joints_v]
    lo = np.where(np.isfinite(lo), lo, -1.0)
    hi = np.where(np.isfinite(hi), hi, 1.0)
    q[joints_q] = rng.uniform(lo, hi)
    return q, rng.normal(size=model.nv)


def fd(f, x0, n, step, plus):
    """Central differences of f along the n directions of plus(x0, eps e_j)."""
    cols = []
    for j in range(n):
        e = np.zeros(n)
        e[j] = step
        cols.append((f(plus(x0, e)) - f(plus(x0, -e))) / (2 * step))
    return np.stack(cols, axis=1)


def models():
    out = [talus.Model.from_urdf(str(QUADRUPED))]
    from conftest import ANYMAL
    if ANYMAL.exists():
        out.append(talus.Model.from_urdf(str(ANYMAL)))
    return out


@pytest.mark.parametrize("model", models(), ids=lambda m: m.name)
def test_configuration_calculus(model):
    rng = np.random.default_rng(24)
    q, _ = random_state(model, rng)
    v = 0.5 * rng.normal(size=model.nv)
    q1 = model.integrate(q, v)
    assert q1.shape == (model.nq,) and q1.dtype == np.float64
    assert np.max(np.abs(model.difference(q, q1) - v)) < 1e-12
    Jq, Jv = model.integrate_jacobians(q, v)
    J0, J1 = model.difference_jacobians(q, q1)
    assert Jq.shape == Jv.shape == J0.shape == J1.shape == (model.nv, model.nv)
    h = 1e-6
    assert rel(Jq, fd(lambda x: model.difference(q1, model.integrate(x, v)), q, model.nv, h, model.integrate)) < 1e-7
    assert rel(Jv, fd(lambda x: model.difference(q1, model.integrate(q, x)), v, model.nv, h, np.add)) < 1e-7
    assert rel(J0, fd(lambda x: model.difference(x, q1), q, model.nv, h, model.integrate)) < 1e-7
    assert rel(J1, fd(lambda x: model.difference(q, x), q1, model.nv, h, model.integrate)) < 1e-7
    with pytest.raises(ValueError):
        model.integrate(q[:-1], v)
    with pytest.raises(ValueError):
        model.difference(q, v)


@pytest.mark.parametrize("model", models(), ids=lambda m: m.name)
def test_dynamics_derivatives(model):
    rng = np.random.default_rng(7)
    world = talus.World(gravity=(0, 0, -9.81))
    sys = world.add_system(model)
    q, u = random_state(model, rng)
    sys.set_state(q, u)
    q, u = sys.q, sys.u
    du = rng.normal(size=model.nv)
    tau = sys.inverse_dynamics(du) + rng.normal(size=model.nv)

    dtau_dq, dtau_du = sys.inverse_dynamics_derivatives(du)
    assert dtau_dq.shape == dtau_du.shape == (model.nv, model.nv) and dtau_dq.dtype == np.float64

    def id_at(qq, uu, dd):
        sys.set_state(qq, uu)
        return sys.inverse_dynamics(dd)

    def fwd_at(qq, uu, tt):
        sys.set_state(qq, uu)
        return sys.forward_dynamics(tt)

    h = 1e-5
    assert rel(dtau_dq, fd(lambda x: id_at(x, u, du), q, model.nv, h, model.integrate)) < 1e-6
    assert rel(dtau_du, fd(lambda x: id_at(q, x, du), u, model.nv, h, np.add)) < 1e-6
    sys.set_state(q, u)
    M = sys.mass_matrix()
    assert rel(fd(lambda x: id_at(q, u, x), du, model.nv, 1.0, np.add), M) < 1e-9

    sys.set_state(q, u)
    ddu_dq, ddu_du, ddu_dtau = sys.forward_dynamics_derivatives(tau)
    assert rel(ddu_dq, fd(lambda x: fwd_at(x, u, tau), q, model.nv, h, model.integrate)) < 1e-6
    assert rel(ddu_du, fd(lambda x: fwd_at(q, x, tau), u, model.nv, h, np.add)) < 1e-6
    sys.set_state(q, u)
    assert rel(ddu_dtau, sys.inverse_mass_matrix()) < 1e-9
    # forward = -M^-1 inverse at the ABA solution
    a = sys.forward_dynamics(tau)
    iq, iu = sys.inverse_dynamics_derivatives(a)
    assert rel(ddu_dq, -np.linalg.solve(M, iq)) < 1e-9
    assert rel(ddu_du, -np.linalg.solve(M, iu)) < 1e-9

    foot = model.frame_names[-1]
    dp, dR = sys.frame_placement_derivatives(foot)
    assert dp.shape == dR.shape == (3, model.nv)
    J = sys.frame_jacobian(foot)
    assert np.array_equal(dp, J[:3]) and np.array_equal(dR, J[3:])

    def pos_at(qq):
        sys.set_state(qq, u)
        return sys.frame_pose(foot)[0]
    assert rel(dp, fd(pos_at, q, model.nv, h, model.integrate)) < 1e-6

    with pytest.raises(ValueError):
        sys.inverse_dynamics_derivatives(du[:-1])
    with pytest.raises(talus.Error):
        sys.forward_dynamics_derivatives(np.full(model.nv, np.nan))


@pytest.mark.parametrize("model", models(), ids=lambda m: m.name)
def test_passive_derivatives(model):
    """passive_force (damping, external forces at body points, world frame) and the *_passive_derivatives
    against central differences, the forces added again at every perturbed state."""
    rng = np.random.default_rng(11)
    world = talus.World(gravity=(0, 0, -9.81))
    sys = world.add_system(model)
    for k in range(6 if model.floating_base else 0, model.nv):
        sys.set_joint_damping(k, 0.5 + rng.uniform())
        sys.set_rotor_inertia(k, 0.05)
    q, u = random_state(model, rng)
    du = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    f1, f2, p1 = 30 * rng.normal(size=3), 20 * rng.normal(size=3), rng.normal(size=3)
    nb = model.nbody

    def at(qq, uu):
        sys.set_state(qq, uu)
        sys.clear_external_forces()
        p = sys.body_pose(nb - 1)
        sys.add_external_force(nb - 1, f1, p[0] + p[1] @ (0.1 * p1))
        sys.add_external_force(nb // 2, f2)

    def tp(qq, uu):
        at(qq, uu)
        return sys.passive_force()

    def idp(qq, uu):
        t = tp(qq, uu)  # sets the state first
        return sys.inverse_dynamics(du) - t

    def fwp(qq, uu):
        t = tp(qq, uu)
        return sys.forward_dynamics(tau + t)

    at(q, u)
    q, u = sys.q, sys.u
    at(q, u)
    A = sys.passive_force_derivatives()
    at(q, u)
    B = sys.inverse_dynamics_passive_derivatives(du)
    at(q, u)
    C = sys.forward_dynamics_passive_derivatives(tau)
    assert A[0].shape == (model.nv, model.nv) and len(C) == 3
    h = 1e-5
    for (dq, du_), f in ((A, tp), (B, idp), (C[:2], fwp)):
        assert rel(dq, fd(lambda x: f(x, u), q, model.nv, h, model.integrate)) < 1e-6
        assert rel(du_, fd(lambda x: f(q, x), u, model.nv, h, np.add)) < 1e-6
    at(q, u)
    assert rel(C[2], sys.inverse_mass_matrix()) < 1e-9
    # the forces' q dependence is in it: without them dtp_dq is zero (damping only)
    sys.clear_external_forces()
    assert np.max(np.abs(sys.passive_force_derivatives()[0])) == 0.0 and np.max(np.abs(A[0])) > 1.0
