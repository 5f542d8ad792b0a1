#!/usr/bin/env python3
"""Train ANYmal C to follow base velocity commands: PPO (PyTorch, CPU) on
talus.VecEnv("anymal-locomotion"), for a fixed wall-clock budget (default 30 minutes).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_anymal.py [--minutes 30] [--out DIR]
    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_anymal.py --play [--out DIR]

The goal (issue 25 §1): on a 2-core machine, in at most 30 minutes of wall time, a policy that
tracks random base velocity commands (vx in [-1, 1] m/s, vy in [-0.5, 0.5] m/s, yaw rate in
[-1, 1] rad/s) with a mean |v_xy - command| below 0.2 m/s, a mean |yaw rate - command| below
0.3 rad/s and fewer than 5 % falls over 64 evaluation episodes of 10 s with fresh commands.

Training writes to --out (default anymal_ppo/): policy.pt (network and observation
normalization of the best evaluation during training), last.pt (those at the end), history.json
(per iteration: wall time, env steps, reward, losses; per evaluation: the three measures),
summary.json (env steps, where the time went, the wall time at which each target was first met,
which policy was saved), learning_curve.png (mean reward per env step and the tracking errors
against wall time). Every --eval-every minutes (default 3) and at the end, the policy is
measured as the goal states (`evaluate_policy`, validation seed 1234); those evaluations count
in the wall time.

The task is legged_gym's flat-ground ANYmal C setup (docs/tasks.md, "anymal-locomotion"), with
the commands in the goal's ranges. PPO (examples/python/ppo.py): 128 environments x 24 steps per
iteration, 5 epochs of 4 minibatches (3 epochs learned too slowly: still standing after 6
minutes), (128, 128) ELU networks, learning rate 1e-3 for the first half of the budget, then
decaying linearly to 0 (at a fixed rate the policy degraded after about 25 minutes), initial standard deviation 0.5, running
observation normalization; PyTorch on one thread (two threads made the update 2.6x slower), the
environments on all cores.

--play loads policy.pt and reports the goal's measure, on test seed 4321 (commands and states
the selection never saw), as strict JSON (eval.json; never NaN: with
every robot fallen the errors are null and all_fell is true), redraws learning_curve.png from
history.json, and records environment 0 of the evaluation as one self-contained HTML page
(play.html, `talus.Recording`). --eval does the same measure without the recording.
"""
import argparse
import copy
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
from ppo import PPO  # noqa: E402

TASK = "anymal-locomotion"
EVAL_COMMANDS = dict(command_vx=(-1.0, 1.0), command_vy=(-0.5, 0.5), command_yaw=(-1.0, 1.0))
TRAIN_COMMANDS = dict(EVAL_COMMANDS)
VALIDATION_SEED = 1234  # the evaluations during training (which pick the policy that is saved)
TEST_SEED = 4321        # --play / --eval: commands and states the selection never saw
TARGETS = {"mean_xy_error_mps": 0.2, "mean_yaw_error_radps": 0.3, "fall_fraction": 0.05}


def make_eval_env(episodes=64, seconds=10.0, seed=TEST_SEED, **kwargs):
    """The evaluation environments: one per episode, commands held for the whole episode and
    sampled uniformly in the goal's ranges (slow ones not zeroed), episodes longer than measured."""
    return talus.VecEnv(TASK, episodes, seed=seed, episode_length_s=seconds + 1, command_resample_s=1e6,
                        command_zero_below=0.0, **EVAL_COMMANDS, **kwargs)


def evaluate_policy(policy, env, seconds=10.0, seed=TEST_SEED):
    """Issue 25's measure of a velocity-tracking policy on `env` (make_eval_env): one episode of
    `seconds` per environment, each with a fresh random command, `policy(raw_obs) -> actions`
    deterministic. Per episode that did not fall, the mean over its last 80 % of |v_xy -
    command_xy| (m/s, base frame) and |yaw rate - command| (rad/s); the result averages them over
    those episodes. A fallen episode counts as a fall only. Valid JSON always: with every episode
    fallen the errors are None and all_fell is True."""
    n = env.num_envs
    raw, _ = env.reset(seed=seed)
    cmd = raw[:, 9:12] / np.array([2.0, 2.0, 0.25])  # the observation's scaled command
    steps = int(round(seconds / env.control_dt))
    fell = np.zeros(n, dtype=bool)
    exy, eyaw = np.zeros(n), np.zeros(n)
    counted = 0
    for k in range(steps):
        raw, _, term, _, _ = env.step(policy(raw))
        fell |= term
        if k >= steps // 5:
            v, yaw = raw[:, 0:2] / 2.0, raw[:, 5] / 0.25
            exy += np.linalg.norm(v - cmd[:, 0:2], axis=1)
            eyaw += np.abs(yaw - cmd[:, 2])
            counted += 1
    ok = ~fell
    res = {"episodes": n, "seconds": seconds, "falls": int(fell.sum()), "fall_fraction": float(fell.mean()),
           "all_fell": bool(fell.all()),
           "mean_xy_error_mps": float(np.mean(exy[ok] / counted)) if ok.any() else None,
           "mean_yaw_error_radps": float(np.mean(eyaw[ok] / counted)) if ok.any() else None,
           "command_ranges": {k: list(v) for k, v in EVAL_COMMANDS.items()}, "targets": dict(TARGETS)}
    res["targets_met"] = bool(ok.any() and res["mean_xy_error_mps"] < TARGETS["mean_xy_error_mps"]
                              and res["mean_yaw_error_radps"] < TARGETS["mean_yaw_error_radps"]
                              and res["fall_fraction"] < TARGETS["fall_fraction"])
    return res


def deterministic_policy(ppo):
    return lambda raw: ppo.act(ppo._obs(raw), deterministic=True).numpy()


def score(res):
    """Lower is better: the evaluation's three measures, each relative to its target."""
    if res["all_fell"]:
        return float("inf")
    return (res["mean_xy_error_mps"] / TARGETS["mean_xy_error_mps"] + res["mean_yaw_error_radps"]
            / TARGETS["mean_yaw_error_radps"] + res["fall_fraction"] / TARGETS["fall_fraction"])


def train(minutes, num_envs, num_steps, seed, threads, out, log=print, max_iterations=None, lr=1e-3,
          init_std=0.5, hidden=(128, 128), epochs=5, eval_every=3.0, eval_episodes=64, ent_coef=0.01,
          **task_options):
    """PPO for `minutes` of wall time (or max_iterations), the learning rate `lr` and the entropy
    bonus `ent_coef` for the first half of the budget, then both decaying linearly to 0,
    evaluating every `eval_every` minutes (0: only at the end) with `eval_episodes` episodes (seed
    VALIDATION_SEED). Returns (env, ppo, history, evals);
    ppo.best holds the network and normalization of the best evaluation (`score`)."""
    opts = dict(TRAIN_COMMANDS, **task_options)
    env = talus.VecEnv(TASK, num_envs, num_threads=threads, seed=seed, **opts)
    eval_env = make_eval_env(eval_episodes, num_threads=threads) if eval_episodes else None
    ppo = PPO(env, num_steps=num_steps, epochs=epochs, minibatches=4, lr=lr, ent_coef=ent_coef,
              hidden=tuple(hidden), act=nn.ELU, init_std=init_std, seed=seed)
    ppo.best = None
    t0 = time.perf_counter()
    history, evals = [], []
    next_eval, it = eval_every * 60, 0

    def run_eval():
        te = time.perf_counter()
        res = evaluate_policy(deterministic_policy(ppo), eval_env, seed=VALIDATION_SEED)
        res.update(wall_s=time.perf_counter() - t0, env_steps=ppo.env_steps, iteration=it,
                   eval_time_s=time.perf_counter() - te)
        evals.append(res)
        if ppo.best is None or score(res) < ppo.best["score"]:
            ppo.best = {"score": score(res), "iteration": it, "wall_s": res["wall_s"],
                        "model": copy.deepcopy(ppo.ac.state_dict()), "obs_norm": ppo.norm.state_dict()}
        log(f"eval  {res['wall_s']:6.0f} s  {ppo.env_steps:9d} steps  xy error {fmt(res['mean_xy_error_mps'])} m/s  "
            f"yaw error {fmt(res['mean_yaw_error_radps'])} rad/s  falls {res['falls']}/{res['episodes']}")

    while time.perf_counter() - t0 < minutes * 60 and (max_iterations is None or it < max_iterations):
        frac = min(1.0, max(0.0, 2.0 * (1.0 - (time.perf_counter() - t0) / (minutes * 60))))
        ppo.set_lr(lr * frac)
        ppo.ent_coef = ent_coef * frac  # the entropy bonus decays with the rate
        stats = ppo.iteration()
        it += 1
        stats.update(iteration=it, wall_s=time.perf_counter() - t0, env_steps=ppo.env_steps,
                     episode_return=ppo.recent_return(100))
        history.append(stats)
        if it % 20 == 0 or it == 1:
            log(f"iter {it:5d}  {stats['wall_s']:6.0f} s  {ppo.env_steps:9d} steps  reward/step "
                f"{stats['mean_reward']:+.5f}  return(100) {stats['episode_return']:+.3f}  "
                f"std {stats['std']:.3f}")
        if eval_env is not None and eval_every > 0 and stats["wall_s"] >= next_eval:
            run_eval()
            next_eval += eval_every * 60
    if eval_env is not None and (not evals or evals[-1]["iteration"] != it):
        run_eval()
    return env, ppo, history, evals


def fmt(x):
    return "  none" if x is None else f"{x:.3f}"


def smooth(x, k=10):
    x = np.asarray(x, dtype=float)
    if len(x) < k:
        return x
    return np.convolve(x, np.ones(k) / k, mode="valid")


def first_met(evals):
    """Wall time (s) and env steps of the first evaluation meeting each target (None: never)."""
    checks = {"mean_xy_error_mps": lambda r: r["mean_xy_error_mps"] is not None and r["mean_xy_error_mps"] < 0.2,
              "mean_yaw_error_radps": lambda r: r["mean_yaw_error_radps"] is not None
              and r["mean_yaw_error_radps"] < 0.3,
              "fall_fraction": lambda r: r["fall_fraction"] < 0.05, "all": lambda r: r["targets_met"]}
    out = {}
    for key, ok in checks.items():
        hit = next((r for r in evals if ok(r)), None)
        out[key] = None if hit is None else {"wall_s": hit["wall_s"], "env_steps": hit["env_steps"]}
    return out


def plot_history(path, history, evals):
    """learning_curve.png: mean reward per env step (10-iteration average) and the evaluations'
    tracking errors and fall fraction against wall time, the targets dashed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a0, a1) = plt.subplots(2, 1, figsize=(6.5, 6), sharex=True)
    wall = [h["wall_s"] / 60 for h in history]
    rew = [h["mean_reward"] for h in history]
    k = min(10, len(rew))
    if k:
        a0.plot(wall[k - 1:], smooth(rew, k), lw=1.5)
    a0.set_ylabel("mean reward per env step")
    a0.set_title(f"PPO on talus.VecEnv('{TASK}')")
    a0.grid(alpha=0.3)
    t = [r["wall_s"] / 60 for r in evals]
    nan = float("nan")
    a1.plot(t, [nan if r["mean_xy_error_mps"] is None else r["mean_xy_error_mps"] for r in evals], "o-",
            label="xy error (m/s)")
    a1.plot(t, [nan if r["mean_yaw_error_radps"] is None else r["mean_yaw_error_radps"] for r in evals], "s-",
            label="yaw-rate error (rad/s)")
    a1.plot(t, [r["fall_fraction"] for r in evals], "^-", label="fall fraction")
    for y, c in ((0.2, "C0"), (0.3, "C1"), (0.05, "C2")):
        a1.axhline(y, color=c, ls="--", lw=0.8)
    a1.set_xlabel("wall time (min)")
    a1.set_ylabel("evaluation (64 episodes of 10 s)")
    a1.legend(loc="upper right", fontsize=8)
    a1.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save(ppo, env, history, evals, out, load):
    out.mkdir(parents=True, exist_ok=True)
    ppo.save(out / "last.pt", {"task": TASK, "hidden": list(ppo.hidden)})
    best = getattr(ppo, "best", None)
    if best is not None:  # policy.pt: the network of the best evaluation during training
        torch.save({"model": best["model"], "obs_norm": best["obs_norm"], "obs_dim": ppo.obs_dim,
                    "act_dim": ppo.act_dim, "task": TASK, "hidden": list(ppo.hidden),
                    "iteration": best["iteration"], "wall_s": best["wall_s"]}, out / "policy.pt")
    else:
        ppo.save(out / "policy.pt", {"task": TASK, "hidden": list(ppo.hidden)})
    (out / "history.json").write_text(json.dumps({"iterations": history, "evaluations": evals}))
    plot_history(out / "learning_curve.png", history, evals)
    rew = [h["mean_reward"] for h in history]
    n = len(rew)
    wall = history[-1]["wall_s"] if history else 0.0
    env_time = float(sum(h["env_time"] for h in history))
    eval_time = float(sum(r["eval_time_s"] for r in evals))
    summary = {"iterations": n, "env_steps": ppo.env_steps, "wall_s": wall,
               "mean_reward_first_10pct": float(np.mean(rew[:max(1, n // 10)])) if n else None,
               "mean_reward_last_10pct": float(np.mean(rew[-max(1, n // 10):])) if n else None,
               "episode_return_last": None if not ppo.episodes else ppo.recent_return(100),
               "episodes": len(ppo.episodes), "num_envs": env.num_envs, "num_threads": env.num_threads,
               "torch_threads": torch.get_num_threads(),
               "time_s": {"environment": env_time, "evaluation": eval_time,
                          "update_and_policy": max(0.0, wall - env_time - eval_time)},
               "first_met": first_met(evals), "final_evaluation": evals[-1] if evals else None,
               "saved_policy": None if best is None else {"iteration": best["iteration"], "wall_s": best["wall_s"],
                                                          "score": best["score"]},
               "load_average_start": load, "load_average_end": os.getloadavg(),
               "losses_finite": all(np.isfinite([h["policy_loss"], h["value_loss"]]).all() for h in history)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def load_policy(out, env):
    ckpt = torch.load(out / "policy.pt")
    ppo = PPO(env, hidden=tuple(ckpt["hidden"]), act=nn.ELU)
    ppo.ac.load_state_dict(ckpt["model"])
    ppo.norm.load_state_dict(ckpt["obs_norm"])
    return ppo


def evaluate(out, episodes=64, seconds=10.0, seed=TEST_SEED, record=False):
    """Measure policy.pt of `out` (evaluate_policy) and write eval.json; with record=True also
    play.html, a recording of environment 0, and learning_curve.png redrawn from history.json."""
    kwargs = dict(record_env=0, record_path=str(out / "play.html")) if record else {}
    env = make_eval_env(episodes, seconds, seed, **kwargs)
    res = evaluate_policy(deterministic_policy(load_policy(out, env)), env, seconds, seed)
    env.close()
    if record:
        res["recording"] = str(out / "play.html")
        hist = out / "history.json"
        if hist.exists():
            h = json.loads(hist.read_text())
            plot_history(out / "learning_curve.png", h["iterations"], h["evaluations"])
            res["learning_curve"] = str(out / "learning_curve.png")
    (out / "eval.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="anymal_ppo", help="output folder")
    ap.add_argument("--minutes", type=float, default=30.0, help="wall-clock training budget")
    ap.add_argument("--envs", type=int, default=128)
    ap.add_argument("--steps", type=int, default=24, help="steps per environment per iteration")
    ap.add_argument("--threads", type=int, default=None, help="VecEnv threads (default: all CPUs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=5, help="PPO epochs per iteration")
    ap.add_argument("--init-std", type=float, default=0.5, help="initial policy standard deviation")
    ap.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus (decays with the rate)")
    ap.add_argument("--eval-every", type=float, default=3.0, help="minutes between evaluations (0: at the end)")
    ap.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                    help="a task option (docs/tasks.md), e.g. --opt command_vy=-1,1 --opt friction=0.5,1.25")
    ap.add_argument("--play", action="store_true",
                    help="measure the saved policy (JSON), redraw the learning curve, record play.html")
    ap.add_argument("--eval", action="store_true", help="measure the saved policy (JSON) only")
    ap.add_argument("--smoke", action="store_true", help="2 short iterations (test suite)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    out = pathlib.Path(args.out)
    if args.play or args.eval:
        evaluate(out, record=args.play)
        return
    load = os.getloadavg()
    if args.smoke:
        env, ppo, history, evals = train(1, 4, 8, args.seed, 1, out, max_iterations=2, eval_episodes=4)
    else:
        opts = {}
        for kv in args.opt:
            k, v = kv.split("=", 1)
            opts[k] = tuple(float(x) for x in v.split(",")) if "," in v else float(v)
        env, ppo, history, evals = train(args.minutes, args.envs, args.steps, args.seed, args.threads, out,
                                         lr=args.lr, init_std=args.init_std, epochs=args.epochs,
                                         ent_coef=args.ent_coef, eval_every=args.eval_every, **opts)
    print(json.dumps(save(ppo, env, history, evals, out, load), indent=2))


if __name__ == "__main__":
    main()
