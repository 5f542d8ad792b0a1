"""ilqr_cartpole.py: the Python twin of ilqr_cartpole.c (issue 24 §5 (a)).

Swings the shared cartpole (../shared/robots/cartpole/cartpole.urdf, fixed base; q = (cart x [m],
pole angle th [rad] about world y), th = 0 upright, th = pi hanging) up from hanging at rest with
iLQR on the analytic step derivatives (World.step_derivatives(mode="analytic")), then holds it in
closed loop. Only the cart is actuated: F = F_MAX tanh(w) [N], |F| <= F_MAX = 50 N, applied as the
generalized force (F, 0) (System.set_generalized_force; no PD). The same algorithm, cost and
constants as the C program (see its header comment): plan over T = 3 s (dt = 1 ms, one control per
step), track with the iLQR gains, then the upright LQR to t = 4 s. Uses the talus module and NumPy.

Prints the time from which the pole stays within 0.1 rad of upright, the final angle error, the
largest |F| and the solve time; exit 0 when upright within 0.1 rad before 3 s and to the end with
|F| <= F_MAX, 1 otherwise, 77 when the shared corpus is absent.

Usage: PYTHONPATH=build/python python3 examples/mpc/ilqr_cartpole.py [--urdf PATH] [--max-iter N]
"""
import argparse
import pathlib
import sys
import time

import numpy as np

import talus

F_MAX = 50.0  # N
T_PLAN, T_RUN = 3.0, 4.0  # s
C_TH, C_X, C_V, C_W, R_F, R_W = 20.0, 0.1, 0.05, 0.5, 1e-3, 1e-3
PERIOD0, W0 = 1.7, 0.8  # initial guess: w = W0 sin(2 pi t / PERIOD0)


def wrap(a):
    return np.arctan2(np.sin(a), np.cos(a))


class Planner:
    def __init__(self, model):
        self.world = talus.World()
        self.sys = self.world.add_system(model)
        self.dt = self.world.dt
        self.n = int(round(T_PLAN / self.dt))
        self.P, self.K_lqr = self.lqr_upright()

    def x(self):
        return np.concatenate([self.sys.q, self.sys.u])

    def force(self, F):
        self.sys.set_generalized_force(np.array([F, 0.0]))  # only the cart is actuated

    def lqr_upright(self):
        """Infinite-horizon discrete LQR at upright: Riccati iteration (symmetrized) to a fixed point."""
        self.sys.set_state(np.zeros(2), np.zeros(2))
        self.force(0.0)
        A, B = self.world.step_derivatives(mode="analytic")
        B = B[:, 0]
        Q = self.dt * np.diag([C_X, C_TH, C_V, C_W])
        R = self.dt * R_F
        P = Q.copy()
        for _ in range(200000):
            PB = P @ B
            s = R + B @ PB
            K = (PB @ A) / s
            Pn = Q + A.T @ P @ A - s * np.outer(K, K)
            Pn = 0.5 * (Pn + Pn.T)
            done = np.max(np.abs(Pn - P) / np.maximum(1.0, np.abs(Pn))) < 1e-11
            P = Pn
            if done:
                break
        return P, K

    def running_cost(self, x, w):
        F = F_MAX * np.tanh(w)
        return self.dt * (C_TH * (1 - np.cos(x[1])) + 0.5 * (C_X * x[0] ** 2 + C_V * x[2] ** 2 + C_W * x[3] ** 2)
                          + 0.5 * (R_F * F * F + R_W * w * w))

    def terminal_error(self, x):
        return np.array([x[0], wrap(x[1]), x[2], x[3]])

    def rollout(self, wbar, xbar=None, kff=None, K=None, alpha=0.0):
        self.world.snapshot_restore(self.snap)
        n = self.n
        xs, ws, cost = np.empty((n + 1, 4)), np.empty(n), 0.0
        for k in range(n):
            x = self.x()
            xs[k] = x
            w = wbar[k]
            if kff is not None:
                w += alpha * kff[k] + K[k] @ (x - xbar[k])
            ws[k] = w
            cost += self.running_cost(x, w)
            self.force(F_MAX * np.tanh(w))
            self.world.step()
        xs[n] = self.x()
        e = self.terminal_error(xs[n])
        return xs, ws, cost + 0.5 * e @ self.P @ e

    def linearize(self, ws):
        self.world.snapshot_restore(self.snap)
        As, Bs, fallback = np.empty((self.n, 4, 4)), np.empty((self.n, 4)), 0
        for k in range(self.n):
            self.force(F_MAX * np.tanh(ws[k]))
            A, B, used = self.world.step_derivatives(mode="analytic", info=True)
            fallback += used != "analytic"
            As[k], Bs[k] = A, B[:, 0]
            self.world.step()
        return As, Bs, fallback

    def backward(self, xs, ws, As, Bs, mu):
        """Tassa, Erez, Todorov 2012 with mu on V_xx; Gauss-Newton Hessians (1 - cos th: 1)."""
        dt, n = self.dt, self.n
        e = self.terminal_error(xs[n])
        Vx, Vxx = self.P @ e, self.P.copy()
        kff, K = np.empty(n), np.empty((n, 4))
        dV = np.zeros(2)
        lxx = dt * np.diag([C_X, C_TH, C_V, C_W])
        I4 = np.eye(4)
        for k in range(n - 1, -1, -1):
            x, A = xs[k], As[k]
            th = np.tanh(ws[k])
            dF, F = F_MAX * (1 - th * th), F_MAX * th
            fu = Bs[k] * dF
            lx = dt * np.array([C_X * x[0], C_TH * np.sin(x[1]), C_V * x[2], C_W * x[3]])
            lu = dt * (R_F * F * dF + R_W * ws[k])
            luu = dt * (R_F * dF * dF + R_W)
            Qx = lx + A.T @ Vx
            Qu = lu + fu @ Vx
            Vfu = Vxx @ fu
            Vr = Vxx + mu * I4
            Quu_r = luu + fu @ Vr @ fu
            if not Quu_r > 0:
                return None
            Qux_r = fu @ Vr @ A
            Qux, Quu = Vfu @ A, luu + fu @ Vfu
            Qxx = lxx + A.T @ Vxx @ A
            kk, Kk = -Qu / Quu_r, -Qux_r / Quu_r
            kff[k], K[k] = kk, Kk
            dV += (kk * Qu, 0.5 * kk * kk * Quu_r)
            Vx = Qx + Kk * (Quu * kk) + Kk * Qu + Qux * kk
            Vxx = Qxx + Quu * np.outer(Kk, Kk) + np.outer(Kk, Qux) + np.outer(Qux, Kk)
            Vxx = 0.5 * (Vxx + Vxx.T)
        return kff, K, dV

    def solve(self, x0, max_iter):
        self.sys.set_state(x0[:2], x0[2:])
        self.snap = self.world.snapshot_save()
        t = np.arange(self.n) * self.dt
        xs, ws, cost = self.rollout(W0 * np.sin(2 * np.pi * t / PERIOD0))
        mu, nfallback, it = 1e-6, 0, 0
        for it in range(1, max_iter + 1):
            As, Bs, fb = self.linearize(ws)
            nfallback += fb
            out = self.backward(xs, ws, As, Bs, mu)
            while out is None and mu < 1e10:
                mu = max(mu * 10, 1e-6)
                out = self.backward(xs, ws, As, Bs, mu)
            if out is None:
                break
            kff, K, dV = out
            alpha, accepted = 1.0, False
            for _ in range(10):
                xn, wn, cn = self.rollout(ws, xs, kff, K, alpha)
                expected = -(alpha * dV[0] + alpha * alpha * dV[1])
                if np.isfinite(cn) and cn < cost and (expected <= 0 or (cost - cn) / expected > 1e-4):
                    accepted = True
                    break
                alpha *= 0.5
            if accepted:
                improvement = (cost - cn) / cost
                xs, ws, cost = xn, wn, cn
                mu = max(mu * 0.5, 1e-9)
                if improvement < 1e-7:
                    break
            else:
                mu = max(mu * 10, 1e-6)
                if mu > 1e10:
                    break
        self.xs, self.ws, self.K = xs, ws, K
        return cost, it, nfallback


def main():
    here = pathlib.Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--urdf", default=str(here.parents[1] / ".." / "shared" / "robots" / "cartpole" / "cartpole.urdf"))
    ap.add_argument("--max-iter", type=int, default=300)
    args = ap.parse_args()
    if not pathlib.Path(args.urdf).is_file():
        print(f"{args.urdf} is absent (the shared robot corpus is not beside the repository): skipped")
        return 77
    model = talus.Model.from_urdf(args.urdf, floating_base=False)  # the slide bar welded to the world
    if model.nq != 2 or model.nv != 2:
        print(f"error: expected a cart and a pole (nq = nv = 2), got nq {model.nq} nv {model.nv}", file=sys.stderr)
        return 1
    pl = Planner(model)
    x0 = np.array([0.0, np.pi, 0.0, 0.0])  # hanging down at rest
    t0 = time.thread_time()
    cost, iters, nfallback = pl.solve(x0, args.max_iter)
    solve = time.thread_time() - t0
    xT = pl.xs[-1]
    print(f"iLQR: {iters} iterations of {pl.n} steps ({nfallback} derivative calls fell back to finite "
          f"differences), cost {cost:.4f}, planned end angle error {abs(wrap(xT[1])):.2e} rad; "
          f"solve {solve:.2f} s CPU ({1e3 * solve / max(iters, 1):.0f} ms per iteration)")

    world = talus.World()
    sys_ = world.add_system(model)
    sys_.set_state(x0[:2], x0[2:])
    nrun = int(round(T_RUN / world.dt))
    t_settle, max_f = None, 0.0
    for k in range(nrun + 1):
        x = np.concatenate([sys_.q, sys_.u])
        t = k * world.dt
        if abs(wrap(x[1])) < 0.1:
            t_settle = t if t_settle is None else t_settle
        else:
            t_settle = None
        if k % 500 == 0:
            print(f"  t {t:4.2f} s  cart {x[0]:6.3f} m  angle from upright {wrap(x[1]):6.3f} rad")
        if k == nrun:
            break
        if k < pl.n:
            F = F_MAX * np.tanh(pl.ws[k] + pl.K[k] @ (x - pl.xs[k]))
        else:
            e = np.array([x[0], wrap(x[1]), x[2], x[3]])
            F = float(np.clip(-pl.K_lqr @ e, -F_MAX, F_MAX))
        sys_.set_generalized_force(np.array([F, 0.0]))
        world.step()
        max_f = max(max_f, abs(sys_.applied_generalized_force()[0]))
    final = abs(wrap(x[1]))
    settle = -1.0 if t_settle is None else t_settle
    print(f"upright (within 0.1 rad, staying) from t = {settle:.3f} s; final angle error {final:.2e} rad; "
          f"max |F| {max_f:.2f} N (bound {F_MAX:.0f} N); iLQR solve {solve:.2f} s CPU")
    ok = t_settle is not None and t_settle < T_PLAN and max_f <= F_MAX + 1e-9
    print("PASS" if ok else "FAIL: not upright within 0.1 rad before 3 s and to the end, or |F| over the bound")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
