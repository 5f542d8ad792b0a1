#!/usr/bin/env python3
"""Train ANYmal C to follow base velocity commands: PPO (PyTorch, CPU) on
talus.VecEnv("anymal-locomotion"), for a fixed wall-clock budget (default 10 minutes).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_anymal.py [--minutes 10] [--out DIR]
    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_anymal.py --play [--out DIR]

Training writes to --out (default anymal_ppo/): learning_curve.png (mean reward per env step and
mean episode return against wall time), policy.pt (network and observation normalization),
summary.json. The task is legged_gym's flat-ground ANYmal C setup (docs/tasks.md): commands
vx, vy, yaw rate uniform in [-1, 1], 20 s episodes, reward = velocity tracking minus torque,
action-rate, acceleration and orientation penalties. A 10-minute CPU run is a small fraction of
the ~10^8 steps legged_gym uses on a GPU: the reward rises, the gait is not finished.

--eval loads policy.pt and measures it as issue 25 does: 64 episodes of 10 s, each with a fresh
random command (vx in [-1, 1] m/s, vy in [-0.5, 0.5] m/s, yaw rate in [-1, 1] rad/s), the mean
|v_xy - command| and |yaw rate - command| over the last 8 s of the episodes that did not fall, and
the fall fraction, as strict JSON in eval.json (targets 0.2 m/s, 0.3 rad/s, 5 %).

--play loads policy.pt and runs the deterministic policy on 8 environments for each forward
command vx in {0, 0.5, 1.0} m/s (vy = yaw rate = 0) for 10 s, and reports the tracked velocity
(mean forward base velocity over the last 8 s) and how many environments fell.
"""
import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import talus  # noqa: E402
from ppo import PPO, plot_curve  # noqa: E402


def train(minutes, num_envs, num_steps, seed, threads, out, log=print, max_iterations=None, lr=1e-3,
          init_std=0.5, **task_options):
    env = talus.VecEnv("anymal-locomotion", num_envs, num_threads=threads, seed=seed, **task_options)
    ppo = PPO(env, num_steps=num_steps, epochs=5, minibatches=4, lr=lr, ent_coef=0.0,
              hidden=(128, 128), act=nn.ELU, init_std=init_std, seed=seed)
    t0 = time.perf_counter()
    history = []
    it = 0
    while time.perf_counter() - t0 < minutes * 60 and (max_iterations is None or it < max_iterations):
        stats = ppo.iteration()
        it += 1
        stats.update(iteration=it, wall_s=time.perf_counter() - t0, env_steps=ppo.env_steps,
                     episode_return=ppo.recent_return(100))
        history.append(stats)
        if it % 20 == 0 or it == 1:
            log(f"iter {it:5d}  {stats['wall_s']:6.0f} s  {ppo.env_steps:9d} steps  reward/step "
                f"{stats['mean_reward']:+.5f}  return(100) {stats['episode_return']:+.3f}  "
                f"std {stats['std']:.3f}  lr {stats['lr']:.1e}")
    return env, ppo, history


def smooth(x, k=10):
    x = np.asarray(x, dtype=float)
    if len(x) < k:
        return x
    return np.convolve(x, np.ones(k) / k, mode="valid")


def save(ppo, env, history, out, load):
    out.mkdir(parents=True, exist_ok=True)
    ppo.save(out / "policy.pt", {"task": "anymal-locomotion", "hidden": [128, 128]})
    wall = [h["wall_s"] for h in history]
    rew = [h["mean_reward"] for h in history]
    n = len(rew)
    first, last = float(np.mean(rew[:max(1, n // 10)])), float(np.mean(rew[-max(1, n // 10):]))
    if n >= 2:
        k = min(10, n)
        plot_curve(out / "learning_curve.png", wall[k - 1:], smooth(rew, k), "wall time (s)",
                   f"mean reward per env step ({k}-iteration average)",
                   "PPO on talus VecEnv('anymal-locomotion')")
    summary = {"iterations": n, "env_steps": ppo.env_steps, "wall_s": wall[-1] if wall else 0.0,
               "mean_reward_first_10pct": first, "mean_reward_last_10pct": last,
               "episode_return_last": ppo.recent_return(100), "episodes": len(ppo.episodes),
               "num_envs": env.num_envs, "num_threads": env.num_threads, "torch_threads": torch.get_num_threads(),
               "env_time_s": float(sum(h["env_time"] for h in history)), "load_average_start": load,
               "load_average_end": os.getloadavg(),
               "losses_finite": all(np.isfinite([h["policy_loss"], h["value_loss"]]).all() for h in history)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def play(out, seconds=10.0, num_envs=8):
    ckpt = torch.load(out / "policy.pt")
    results = []
    for vx in (0.0, 0.5, 1.0):
        env = talus.VecEnv("anymal-locomotion", num_envs, seed=7, command_vx=vx, command_vy=0.0, command_yaw=0.0,
                           episode_length_s=seconds + 1)
        ppo = PPO(env, hidden=tuple(ckpt["hidden"]), act=nn.ELU)
        ppo.ac.load_state_dict(ckpt["model"])
        ppo.norm.load_state_dict(ckpt["obs_norm"])
        raw, _ = env.reset(seed=7)
        steps = int(seconds / env.control_dt)
        vel, fell = [], np.zeros(num_envs, dtype=bool)
        for k in range(steps):
            a = ppo.act(ppo._obs(raw), deterministic=True)
            raw, rew, term, trunc, infos = env.step(a.numpy())
            fell |= term
            if k >= steps // 5:  # skip the first 2 s (getting going)
                vel.append(np.where(fell, np.nan, raw[:, 0] / 2.0))  # obs 0 = 2 x base vx
        v = np.nanmean(np.array(vel)) if not fell.all() else float("nan")
        results.append({"command_vx": vx, "tracked_vx": float(v), "fell": int(fell.sum()), "envs": num_envs})
        print(f"command vx {vx:.1f} m/s: mean forward velocity {v:+.3f} m/s over the last {0.8 * seconds:.0f} s, "
              f"{fell.sum()} of {num_envs} fell")
    (out / "play.json").write_text(json.dumps(results, indent=2))
    return results


EVAL_COMMANDS = dict(command_vx=(-1.0, 1.0), command_vy=(-0.5, 0.5), command_yaw=(-1.0, 1.0))


def evaluate(out, episodes=64, seconds=10.0, seed=1234):
    """Issue 25's measure of a velocity-tracking policy: `episodes` episodes of `seconds`, each
    with a fresh random command (vx in [-1, 1] m/s, vy in [-0.5, 0.5] m/s, yaw rate in [-1, 1]
    rad/s, held for the whole episode), the deterministic policy. Per episode that did not fall,
    the mean over its last 80 % of |v_xy - command_xy| (m/s, base frame) and |yaw rate - command|
    (rad/s); the report averages them over those episodes. A fallen episode counts as a fall
    only. Valid JSON always: with every episode fallen the errors are null and all_fell is true.
    Targets: mean xy error < 0.2 m/s, yaw error < 0.3 rad/s, falls < 5 %."""
    ckpt = torch.load(out / "policy.pt")
    env = talus.VecEnv("anymal-locomotion", episodes, seed=seed, episode_length_s=seconds + 1,
                       command_resample_s=1e6, **EVAL_COMMANDS)
    ppo = PPO(env, hidden=tuple(ckpt["hidden"]), act=nn.ELU)
    ppo.ac.load_state_dict(ckpt["model"])
    ppo.norm.load_state_dict(ckpt["obs_norm"])
    raw, _ = env.reset(seed=seed)
    cmd = raw[:, 9:12] / np.array([2.0, 2.0, 0.25])  # the observation's scaled command
    steps = int(round(seconds / env.control_dt))
    fell = np.zeros(episodes, dtype=bool)
    exy, eyaw = np.zeros(episodes), np.zeros(episodes)
    counted = 0
    for k in range(steps):
        a = ppo.act(ppo._obs(raw), deterministic=True)
        raw, _, term, _, _ = env.step(a.numpy())
        fell |= term
        if k >= steps // 5:
            v, yaw = raw[:, 0:2] / 2.0, raw[:, 5] / 0.25
            exy += np.linalg.norm(v - cmd[:, 0:2], axis=1)
            eyaw += np.abs(yaw - cmd[:, 2])
            counted += 1
    ok = ~fell
    res = {"episodes": episodes, "seconds": seconds, "falls": int(fell.sum()),
           "fall_fraction": float(fell.mean()), "all_fell": bool(fell.all()),
           "mean_xy_error_mps": float(np.mean(exy[ok] / counted)) if ok.any() else None,
           "mean_yaw_error_radps": float(np.mean(eyaw[ok] / counted)) if ok.any() else None,
           "command_ranges": {k: list(v) for k, v in EVAL_COMMANDS.items()},
           "targets": {"mean_xy_error_mps": 0.2, "mean_yaw_error_radps": 0.3, "fall_fraction": 0.05}}
    res["targets_met"] = bool(ok.any() and res["mean_xy_error_mps"] < 0.2 and res["mean_yaw_error_radps"] < 0.3
                              and res["fall_fraction"] < 0.05)
    (out / "eval.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="anymal_ppo", help="output folder")
    ap.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget")
    ap.add_argument("--envs", type=int, default=128)
    ap.add_argument("--steps", type=int, default=24, help="steps per environment per iteration")
    ap.add_argument("--threads", type=int, default=None, help="VecEnv threads (default: all CPUs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--init-std", type=float, default=0.5, help="initial policy standard deviation")
    ap.add_argument("--forward-only", action="store_true",
                    help="commands vx in [0, 1] m/s, vy = yaw rate = 0 (an easier task)")
    ap.add_argument("--play", action="store_true", help="run the saved policy and report the tracked velocity")
    ap.add_argument("--eval", action="store_true",
                    help="issue 25's evaluation of the saved policy: 64 episodes of 10 s, random commands, JSON")
    ap.add_argument("--smoke", action="store_true", help="2 short iterations (test suite)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    out = pathlib.Path(args.out)
    if args.play:
        play(out)
        return
    if args.eval:
        evaluate(out)
        return
    load = os.getloadavg()
    if args.smoke:
        env, ppo, history = train(1, 4, 8, args.seed, 1, out, max_iterations=2)
    else:
        opts = dict(command_vx=(0.0, 1.0), command_vy=0.0, command_yaw=0.0) if args.forward_only else {}
        env, ppo, history = train(args.minutes, args.envs, args.steps, args.seed, args.threads, out, lr=args.lr,
                                  init_std=args.init_std, **opts)
    print(json.dumps(save(ppo, env, history, out, load), indent=2))


if __name__ == "__main__":
    main()
