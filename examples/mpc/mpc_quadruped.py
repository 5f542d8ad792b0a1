"""mpc_quadruped.py: the NumPy twin of mpc_quadruped.c / controllers/mpc.c (issue 24 §5 (b)).

The default quadruped (robots/talus_quadruped) stands up from lying on its belly and holds a base
height (0.45 m) and orientation (level) target under a 50 N lateral push (+y at the base's COM, 3 s
to 4 s, unknown to the plan), in closed loop at 100 Hz, with a receding-horizon iLQR on the analytic
step derivatives with contacts (World.step_derivatives(mode="analytic")). The same plant, lying
posture, model, cost, weights and algorithm as the C program (see controllers/mpc.h and the header of
mpc_quadruped.c): plant dt 2 ms, joint PD kp 150, kd 4 toward the standing posture
(talus.find_standing_pose at 0.45 m); the plan's model a second world at 10 ms; 30 knots (0.3 s);
control = the joints' feed-forward torques on top of the PD; one warm-started iLQR iteration per
control step (the previous plan shifted, rolled out with its gains from the measured state;
Levenberg-Marquardt on Q_uu; line search 1, 1/2, 1/4). The backward pass is NumPy; the rest
calls the talus module (a step-derivatives workspace is made per call there).

Prints the same figures as the C program and the solve time per control step (process CPU time);
exit 0 under the same bounds (standing within 2 cm before 2 s; height error < 1 cm in [2, 3) s and
[4.5, 6] s; orientation error < 2 deg from 2 s on; no fall; no finite-difference fall-back).

Usage: PYTHONPATH=build/python python3 examples/mpc/mpc_quadruped.py [--push N] [--duration S]
"""
import argparse
import pathlib
import sys
import time

import numpy as np

import talus

ROOT = pathlib.Path(__file__).resolve().parents[2]
URDF = ROOT / "robots" / "talus_quadruped" / "talus_quadruped.urdf"
Z_TARGET, DT_SIM, SUBSTEPS = 0.45, 0.002, 5
PUSH_T0, PUSH_T1 = 3.0, 4.0
HEIGHT_TOL, ANGLE_TOL = 0.01, 2.0
KP, KD, MU = 150.0, 4.0, 0.8
N, DT_PLAN = 30, 0.01
# weights: base xy, z, roll/pitch, yaw, joints | base linear, base angular, joint velocities; torque; terminal
W_XY, W_Z, W_RP, W_YAW, W_J, W_VL, W_VA, W_VJ, R_TAU, TERMINAL = 20, 5000, 2000, 200, 20, 20, 20, 0.2, 2e-3, 5
TAU_MAX = 80.0


class MPC:
    def __init__(self, model, q_ref):
        self.m, self.q_ref = model, q_ref.copy()
        self.nq, self.nv = model.nq, model.nv
        self.nu, self.nx = self.nv - 6, 2 * self.nv
        self.world = talus.World(dt=DT_PLAN)
        self.world.add_ground(friction=MU)
        self.sys = self.world.add_system(model)
        kp = np.r_[np.zeros(6), np.full(self.nu, KP)]
        kd = np.r_[np.zeros(6), np.full(self.nu, KD)]
        self.sys.set_pd_gains(kp, kd)
        self.sys.set_pd_targets(q_ref)
        nv = self.nv
        w = np.r_[W_XY, W_XY, W_Z, W_RP, W_RP, W_YAW, np.full(nv - 6, W_J), np.full(3, W_VL), np.full(3, W_VA),
                  np.full(nv - 6, W_VJ)]
        self.W, self.Wf = w.astype(float), TERMINAL * w.astype(float)
        self.Xq = np.tile(q_ref, (N + 1, 1))
        self.Xu = np.zeros((N + 1, nv))
        self.U = np.zeros((N, self.nu))
        self.K = np.zeros((N, self.nu, self.nx))
        self.kff = np.zeros((N, self.nu))
        self.A = np.zeros((N, self.nx, self.nx))
        self.B = np.zeros((N, self.nx, self.nu))
        self.mu, self.cost, self.fallbacks = 1e-3, np.inf, 0

    def error(self, q, u):
        return np.r_[self.m.difference(self.q_ref, q), u]

    def rollout(self, q0, u0, alpha, gains):
        Yq, Yu, V = np.empty_like(self.Xq), np.empty_like(self.Xu), np.empty_like(self.U)
        q, u, J = q0.copy(), u0.copy(), 0.0
        for k in range(N):
            Yq[k], Yu[k] = q, u
            v = self.U[k].copy()
            if gains:
                dx = np.r_[self.m.difference(self.Xq[k], q), u - self.Xu[k]]
                v += alpha * self.kff[k] + self.K[k] @ dx
            v = np.clip(v, -TAU_MAX, TAU_MAX)
            V[k] = v
            e = self.error(q, u)
            J += 0.5 * e @ (self.W * e) + 0.5 * R_TAU * v @ v
            self.sys.set_state(q, u)
            self.sys.set_generalized_force(np.r_[np.zeros(6), v])
            self.world.step()
            q, u = self.sys.q, self.sys.u
            if not (np.all(np.isfinite(q)) and np.all(np.isfinite(u))):
                return np.inf, None
        Yq[N], Yu[N] = q, u
        e = self.error(q, u)
        J += 0.5 * e @ (self.Wf * e)
        return J, (Yq, Yu, V)

    def accept(self, J, plan):
        self.cost = J
        self.Xq, self.Xu, self.U = plan

    def linearize(self):
        for k in range(N):
            self.sys.set_state(self.Xq[k], self.Xu[k])
            self.sys.set_generalized_force(np.r_[np.zeros(6), self.U[k]])
            A, B, used = self.world.step_derivatives(mode="analytic", info=True)
            self.fallbacks += used != "analytic"
            self.A[k], self.B[k] = A, B[:, 6:]

    def backward(self):
        e = self.error(self.Xq[N], self.Xu[N])
        Vx, Vxx = self.Wf * e, np.diag(self.Wf)
        for k in range(N - 1, -1, -1):
            A, B = self.A[k], self.B[k]
            e = self.error(self.Xq[k], self.Xu[k])
            Qx = self.W * e + A.T @ Vx
            Qu = R_TAU * self.U[k] + B.T @ Vx
            Qxx = np.diag(self.W) + A.T @ Vxx @ A
            Quu = R_TAU * np.eye(self.nu) + B.T @ Vxx @ B
            Qux = B.T @ Vxx @ A
            try:
                L = np.linalg.cholesky(Quu + self.mu * np.eye(self.nu))
            except np.linalg.LinAlgError:
                return False
            sol = np.linalg.solve(L.T, np.linalg.solve(L, np.c_[Qu, Qux]))
            kk, Kk = -sol[:, 0], -sol[:, 1:]
            self.kff[k], self.K[k] = kk, Kk
            Vx = Qx + Kk.T @ Quu @ kk + Kk.T @ Qu + Qux.T @ kk
            Vxx = Qxx + Kk.T @ Quu @ Kk + Kk.T @ Qux + Qux.T @ Kk
            Vxx = 0.5 * (Vxx + Vxx.T)
        return True

    def update(self, q, u):
        self.Xq[:-1], self.Xu[:-1] = self.Xq[1:].copy(), self.Xu[1:].copy()
        self.U[:-1], self.K[:-1] = self.U[1:].copy(), self.K[1:].copy()
        J, plan = self.rollout(q, u, 0.0, True)
        if not np.isfinite(J):
            self.K[:] = 0
            J, plan = self.rollout(q, u, 0.0, False)
        if not np.isfinite(J):
            raise RuntimeError("the plan's rollout diverged")
        self.accept(J, plan)
        self.linearize()
        ok = False
        for _ in range(4):
            if self.backward():
                ok = True
                break
            self.mu = min(self.mu * 10, 1e6)
        if ok:
            improved = False
            for alpha in (1.0, 0.5, 0.25):
                Jn, plan = self.rollout(q, u, alpha, True)
                if Jn < self.cost:
                    self.accept(Jn, plan)
                    improved = True
                    break
            self.mu = max(self.mu * 0.5, 1e-6) if improved else min(self.mu * 10, 1e6)
        return np.r_[np.zeros(6), self.U[0]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--push", type=float, default=50.0)
    ap.add_argument("--duration", type=float, default=6.0)
    args = ap.parse_args()
    model = talus.Model.from_urdf(str(URDF))
    nq, nv = model.nq, model.nv
    q_ref = np.asarray(talus.find_standing_pose(model, height=Z_TARGET)["q"], dtype=float)
    mpc = MPC(model, q_ref)

    world = talus.World(dt=DT_SIM)
    world.add_ground(friction=MU)
    s = world.add_system(model)
    s.set_pd_gains(np.r_[np.zeros(6), np.full(nv - 6, KP)], np.r_[np.zeros(6), np.full(nv - 6, KD)])
    # lying: hips spread 0.45 rad, hips and knees folded to 95 % of their limits, dropped, settled 1 s
    lo, hi = model.dof_limits
    q_fold = q_ref.copy()
    for j, name in enumerate(model.joint_names):  # the movable joints after the base
        qi, vi = 7 + j, 6 + j
        if name.endswith("HAA"):
            q_fold[qi] = 0.45 if name[0] == "L" else -0.45
        else:
            q_fold[qi] = 0.95 * (hi[vi] if q_ref[qi] > 0 else lo[vi])
    q0 = q_fold.copy()
    q0[2] = 0.25
    s.set_state(q0, np.zeros(nv))
    s.set_pd_targets(q_fold)
    for _ in range(int(round(1.0 / DT_SIM))):
        world.step()
    z_lying = s.q[2]
    print(f"lying: base height {z_lying:.3f} m (legs folded), target {Z_TARGET:.3f} m")
    s.set_pd_targets(q_ref)

    t0, cpu = world.time, []
    t_up, herr_a, herr_b, ang_max, zmin, fell = -1.0, 0.0, 0.0, 0.0, np.inf, False
    for i in range(int(round(args.duration / DT_SIM))):
        t = world.time - t0
        if i % SUBSTEPS == 0:
            c0 = time.process_time()
            tau = mpc.update(s.q, s.u)
            cpu.append(time.process_time() - c0)
            s.set_generalized_force(tau)
        if args.push and PUSH_T0 - 1e-9 <= t < PUSH_T1 - 1e-9:
            s.add_external_force(0, [0.0, args.push, 0.0])
        world.step()
        q = s.q
        t = world.time - t0
        herr = abs(q[2] - Z_TARGET)
        ang = 2 * np.degrees(np.arccos(min(1.0, abs(q[3]))))
        if herr < 0.02:
            t_up = t if t_up < 0 else t_up
        elif t < 2.0:
            t_up = -1.0
        if t >= 2.0:
            ang_max, zmin = max(ang_max, ang), min(zmin, q[2])
            fell |= q[2] < 0.3
            if t < PUSH_T0:
                herr_a = max(herr_a, herr)
            if t >= 4.5:
                herr_b = max(herr_b, herr)
    cpu = np.array(cpu)
    print(f"stand-up: within 2 cm of {Z_TARGET:.2f} m from t = {t_up:.3f} s (from lying at {z_lying:.3f} m)")
    print(f"height error: {herr_a:.4f} m max in [2, 3) s, {herr_b:.4f} m max in [4.5, {args.duration:g}] s")
    print(f"orientation error: {ang_max:.2f} deg max from 2 s on ({args.push:g} N push, {PUSH_T0} to {PUSH_T1} s)")
    print(f"lowest base height after 2 s {zmin:.4f} m")
    print(f"solve per control step (process CPU): mean {1e3 * cpu.mean():.1f} ms, max {1e3 * cpu.max():.1f} ms over "
          f"{len(cpu)} steps; derivative fall-backs {mpc.fallbacks}")
    ok = (0 < t_up < 2.0 and herr_a < HEIGHT_TOL and (args.duration < 4.5 or herr_b < HEIGHT_TOL)
          and ang_max < ANGLE_TOL and not fell and mpc.fallbacks == 0)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
