#!/usr/bin/env python3
"""Train a policy for talus.VecEnv("cartpole") with PPO (PyTorch, CPU) until it reaches the
maximum episode return (500: the pole stays up for the whole 10 s episode).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_cartpole.py [--out DIR]

Records the wall time at which the last 20 training episodes all returned 500, and stops once
the deterministic policy (the Gaussian's mean) also returns 500 on 16 fresh environments
(checked every 5 iterations from then on). Writes to --out (default
cartpole_ppo/): learning_curve.png (mean return of finished episodes against wall time),
policy.pt, summary.json; prints the wall time, the environment steps and the machine's load
average (the timing depends on what else runs on the cores). --smoke: 2 short iterations, for
the test suite.
"""
import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import talus  # noqa: E402
from ppo import PPO, plot_curve  # noqa: E402

MAX_RETURN = 500.0


def evaluate(ppo, episodes=16, seed=123):
    """Returns of the deterministic policy on fresh environments (one episode each)."""
    env = talus.VecEnv("cartpole", episodes, num_threads=1, seed=seed)
    raw, _ = env.reset(seed=seed)
    returns = np.zeros(episodes)
    done = np.zeros(episodes, dtype=bool)
    for _ in range(env.max_episode_steps):
        a = ppo.act(ppo._obs(raw), deterministic=True)
        raw, rew, term, trunc, infos = env.step(a.numpy())
        returns += np.where(done, 0.0, rew)
        done |= term | trunc
        if done.all():
            break
    return returns


def train(num_envs=32, num_steps=64, time_limit=300.0, seed=0, threads=None, max_iterations=None, log=print):
    env = talus.VecEnv("cartpole", num_envs, num_threads=threads, seed=seed)
    ppo = PPO(env, num_steps=num_steps, epochs=10, minibatches=4, lr=1e-3, hidden=(64, 64), seed=seed)
    t0 = time.perf_counter()
    curve, history = [], []
    reached_at = None
    it = 0
    while time.perf_counter() - t0 < time_limit and (max_iterations is None or it < max_iterations):
        stats = ppo.iteration()
        it += 1
        elapsed = time.perf_counter() - t0
        ret = ppo.recent_return(20)
        stats.update(iteration=it, wall_s=elapsed, env_steps=ppo.env_steps, recent_return=ret)
        history.append(stats)
        if ppo.episodes:
            curve.append((elapsed, ret))
        if it % 5 == 0 or it == 1:
            log(f"iter {it:4d}  {elapsed:6.1f} s  {ppo.env_steps:8d} steps  return(20) {ret:6.1f}  "
                f"policy {stats['policy_loss']:+.4f}  value {stats['value_loss']:.3f}  std {stats['std']:.3f}")
        last = [r for _, r, _ in ppo.episodes[-20:]]
        if reached_at is None and len(last) == 20 and min(last) >= MAX_RETURN:
            reached_at = elapsed  # the training episodes reach the maximum
        if reached_at is not None and it % 5 == 0 and min(evaluate(ppo)) >= MAX_RETURN:
            break  # and so does the deterministic policy on 16 fresh environments
    return env, ppo, curve, history, reached_at


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="cartpole_ppo", help="output folder")
    ap.add_argument("--envs", type=int, default=32)
    ap.add_argument("--steps", type=int, default=64, help="steps per environment per iteration")
    ap.add_argument("--time-limit", type=float, default=300.0, help="s of training at most")
    ap.add_argument("--threads", type=int, default=None, help="VecEnv threads (default: all CPUs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="2 short iterations (test suite)")
    args = ap.parse_args()
    torch.set_num_threads(1)  # small networks: one thread is fastest and leaves the cores to the env
    load = os.getloadavg()
    if args.smoke:
        env, ppo, curve, history, reached = train(num_envs=4, num_steps=16, max_iterations=2, seed=args.seed)
    else:
        env, ppo, curve, history, reached = train(args.envs, args.steps, args.time_limit, args.seed, args.threads)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    eval_returns = evaluate(ppo) if not args.smoke else np.array([])
    summary = {"reached_max_return": reached is not None, "wall_time_to_max_s": reached,
               "wall_time_eval_max_s": history[-1]["wall_s"] if history and len(eval_returns) and
               min(eval_returns) >= MAX_RETURN else None,
               "iterations": len(history), "env_steps": ppo.env_steps, "episodes": len(ppo.episodes),
               "final_recent_return": ppo.recent_return(20), "eval_returns": eval_returns.tolist(),
               "num_envs": env.num_envs, "num_threads": env.num_threads, "torch_threads": torch.get_num_threads(),
               "load_average_start": load, "load_average_end": os.getloadavg(),
               "env_time_s": float(sum(h["env_time"] for h in history)),
               "total_time_s": history[-1]["wall_s"] if history else 0.0,
               "losses_finite": all(np.isfinite([h["policy_loss"], h["value_loss"]]).all() for h in history)}
    ppo.save(out / "policy.pt", {"task": "cartpole"})
    if curve:
        plot_curve(out / "learning_curve.png", [c[0] for c in curve], [c[1] for c in curve], "wall time (s)",
                   "mean return of the last 20 episodes", "PPO on talus VecEnv('cartpole')", target=MAX_RETURN)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
