"""Onboard a robot the tasks were not written for: load it, read the warnings, find a standing
pose, create the urdf task from it and check that it stands (docs/tasks.md, "Onboarding a robot").

    PYTHONPATH=build/python python3 examples/python/onboard_robot.py [URDF] [--base fixed]

Without URDF: the shared Solo 12 (../shared/robots/solo12/robots/solo12.urdf) when present, else
the project's robots/talus_small_quadruped. Prints one JSON line per stage; exits 1 when the robot
does not stand (a fall within the 2 s check) or a standing pose was not found.
"""
import argparse
import json
import pathlib
import sys
import warnings

import numpy as np

import talus

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOLO12 = ROOT.parent / "shared" / "robots" / "solo12" / "robots" / "solo12.urdf"
FALLBACK = ROOT / "robots" / "talus_small_quadruped" / "talus_small_quadruped.urdf"


def show(stage, **values):
    print(json.dumps(dict(stage=stage, **values)), flush=True)


def make_env(urdf, base, **options):
    """The urdf task with the warnings it issued (URDF load and onboarding), as texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = talus.VecEnv("urdf", 4, num_threads=1, seed=0, urdf=urdf, base=base, **options)
    return env, [f"{w.category.__name__}: {w.message}" for w in caught]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("urdf", nargs="?", default=str(SOLO12 if SOLO12.exists() else FALLBACK))
    ap.add_argument("--base", default="floating", choices=["floating", "fixed", "auto"])
    ap.add_argument("--height", type=float, default=None, help="base height of the standing pose, m")
    ap.add_argument("--seconds", type=float, default=2.0, help="length of the standing check, s")
    args = ap.parse_args()

    # 1. load: URDF warnings (missing meshes, implausible inertias) arrive as talus.URDFWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = talus.Model.from_urdf(args.urdf, floating_base={"floating": True, "fixed": False}.get(args.base))
    show("load", robot=model.name, joints=len(model.joint_names), mass_kg=round(model.total_mass, 3),
         floating_base=model.floating_base, urdf_warnings=[str(w.message) for w in caught])

    # 2. the urdf task in the robot's default pose: onboarding warnings say what to fix
    _, texts = make_env(args.urdf, args.base)
    show("default pose", warnings=[t for t in texts if t.startswith("OnboardingWarning")])
    if args.base == "fixed":
        return 0

    # 3. a standing pose by inverse kinematics: feet under the hips at a base height
    pose = talus.find_standing_pose(model, height=args.height)
    show("standing pose", height_m=round(pose["height"], 4), residual_m=pose["residual"],
         com_margin_m=round(pose["com_margin"], 4), feet=pose["feet"],
         joint_pos={k: round(v, 4) for k, v in pose["joint_pos"].items()})
    if pose["residual"] > 1e-3:
        show("result", ok=False, why="the feet cannot reach under the hips at that height: pass --height")
        return 1

    # 4. the task from that pose: no onboarding warning, and it stands with zero actions
    env, texts = make_env(args.urdf, args.base, default_joint_pos=pose["default_joint_pos"])
    onboarding = [t for t in texts if t.startswith("OnboardingWarning")]
    env.reset(seed=0)
    falls, tilt = 0, 0.0
    zero = np.zeros((env.num_envs, env.single_action_space.shape[0]))
    for _ in range(int(round(args.seconds / env.control_dt))):
        obs, reward, terminated, truncated, info = env.step(zero)
        falls += int(terminated.sum())
        tilt = max(tilt, float(np.degrees(np.arccos(np.clip(-obs[:, 8], -1, 1))).max()))
    ok = falls == 0 and not onboarding
    show("result", ok=ok, onboarding_warnings=onboarding, falls=falls, max_tilt_deg=round(tilt, 2),
         seconds=args.seconds, envs=env.num_envs)
    env.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
