# Guards: src/tasks/legged.c (feet_air_time, collision, command_zero_below), src/tasks/onboard.c (tl_task_foot_geom).
"""anymal-locomotion's legged_gym reward terms that depend on contacts: feet_air_time (2.0 x the
air time minus 0.5 s of each foot at its first contact, gated by the command) checked against a
free fall, collision (links other than base and feet pressing on the ground) against a collapse,
and the zeroing of slow planar commands."""
import math

import numpy as np
import pytest

import talus
from conftest import SHARED_ROBOTS, SOURCE_DIR, needs

DT = 0.02  # control period: 5 ms x decimation 4


def run(env, steps, action=None):
    env.reset(seed=3)
    act = np.zeros((env.num_envs, 12), np.float32) if action is None else action
    out = []
    for _ in range(steps):
        _, _, term, _, info = env.step(act)
        t = info["reward_terms"]
        out.append((t["feet_air_time"].copy(), t["collision"].copy(), term.copy()))
        if term.all():
            break
    return out


def test_feet_air_time_of_a_free_fall(anymal_urdf):
    h = 0.3  # the feet start 0.3 m above the ground: they land after sqrt(2 h / g) = 0.247 s
    opts = dict(drop_height=h, joint_noise=0.0, base_vel_noise=0.0, command_vy=0.0, command_yaw=0.0,
                command_zero_below=0.0, only_positive_rewards=False)
    walk = run(talus.VecEnv("anymal-locomotion", 1, seed=3, command_vx=0.5, **opts), 20)
    first = next(k for k, (air, _, _) in enumerate(walk) if air[0] != 0)
    t_land = math.sqrt(2 * h / 9.81)
    assert first + 1 == math.ceil(t_land / DT)  # the control step in which the feet touch down
    air = (first + 1) * DT  # each foot's air time, counted from the reset
    assert abs(walk[first][0][0] - DT * 2.0 * 4 * (air - 0.5)) < 1e-12  # four feet, weight 2
    assert all(c[0] == 0 for _, c, _ in walk)  # feet only: no collision
    stand = run(talus.VecEnv("anymal-locomotion", 1, seed=3, command_vx=0.0, **opts), 20)
    assert all(air[0] == 0 for air, _, _ in stand)  # a standing command earns no steps


def test_collision_counts_links_on_the_ground(anymal_urdf):
    # no PD stiffness: the legs fold and the thighs / knees reach the ground with the base
    opts = dict(joint_noise=0.0, base_vel_noise=0.0, only_positive_rewards=False)
    fall = run(talus.VecEnv("anymal-locomotion", 1, seed=3, kp=0.0, kd=0.5, **opts), 200)
    counts = [c[0] / (-1.0 * DT) for _, c, _ in fall]
    assert fall[-1][2][0] and max(counts) >= 1  # ended by base contact, with links on the ground
    assert all(abs(n - round(n)) < 1e-12 for n in counts)  # a number of links
    stand = run(talus.VecEnv("anymal-locomotion", 2, seed=3, **opts), 50)
    assert all(not c.any() for _, c, _ in stand)  # standing on its feet: none


def test_slow_commands_become_zero(anymal_urdf):
    env = talus.VecEnv("anymal-locomotion", 256, seed=5, command_yaw=0.0)
    obs, _ = env.reset(seed=5)
    cmd = obs[:, 9:11] / 2.0
    speed = np.hypot(cmd[:, 0], cmd[:, 1])
    assert np.all((speed == 0) | (speed >= 0.2 - 1e-6)) and np.any(speed == 0)
    env = talus.VecEnv("anymal-locomotion", 256, seed=5, command_yaw=0.0, command_zero_below=0.0)
    obs, _ = env.reset(seed=5)
    assert np.all(obs[:, 9] != 0)


@pytest.mark.parametrize("robot", ["talus_small_quadruped", "solo12", "hyq"])
def test_feet_air_time_on_other_quadrupeds(robot):
    # the feet are found from the tree (leaf links' farthest collision geoms), not from ANYmal's names
    if robot == "talus_small_quadruped":
        urdf = SOURCE_DIR / "robots" / robot / f"{robot}.urdf"
    else:
        urdf = {"solo12": SHARED_ROBOTS / "solo12/robots/solo12.urdf", "hyq": SHARED_ROBOTS / "hyq/robots/hyq_no_sensors.urdf"}[robot]
        needs(urdf, robot)
    h = 0.2
    env = talus.VecEnv("anymal-locomotion", 1, seed=3, urdf=str(urdf), drop_height=h, joint_noise=0.0,
                       base_vel_noise=0.0, command_vx=0.5, command_vy=0.0, command_yaw=0.0, command_zero_below=0.0,
                       only_positive_rewards=False)
    out = run(env, 20)
    first = next(k for k, (air, _, _) in enumerate(out) if air[0] != 0)
    # the reset puts the lowest primitive geom (a mesh: its body origin) h above the ground, so a
    # mesh foot reaching lower lands up to two control steps before the free-fall time
    assert 0 <= math.ceil(math.sqrt(2 * h / 9.81) / DT) - (first + 1) <= 2
    feet = out[first][0][0] / (DT * 2.0 * ((first + 1) * DT - 0.5))  # the feet that landed in that step
    assert abs(feet - round(feet)) < 1e-9 and 1 <= round(feet) <= 4
    assert all(c[0] == 0 for _, c, _ in out[:first + 1])
