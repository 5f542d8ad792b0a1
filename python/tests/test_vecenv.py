# Guards: python/talus/vecenv.py, python/talus/spaces.py, python/src/py_vecenv.c, src/tasks/.
"""talus.VecEnv: spaces, determinism across thread counts, auto-reset and final_observation,
NaN actions, randomization in infos, seeds."""
import numpy as np
import pytest

import talus

RANDOMIZE = dict(mass_scale=(0.8, 1.2), added_base_mass=(-1.0, 2.0), com_offset=(-0.03, 0.03),
                 friction=(0.5, 1.25), motor_strength=(0.9, 1.1), kp_scale=(0.9, 1.1), kd_scale=(0.8, 1.2),
                 push_velocity=0.5, push_interval=0.4)


def rollout(env, steps, seed, scale):
    """obs, rewards, flags and final observations of `steps` random-action steps."""
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    trace = [obs.copy()]
    for _ in range(steps):
        act = rng.normal(0, scale, env.action_space.shape).astype(np.float32)
        obs, rew, term, trunc, infos = env.step(act)
        terms = np.stack([infos["reward_terms"][name] for name in env.reward_term_names])
        trace += [obs, rew, term, trunc, infos["final_observation"], infos["mass_scale"], terms]
    return trace


def test_spaces(anymal_urdf):
    env = talus.VecEnv("anymal-locomotion", 6, num_threads=2)
    assert env.num_envs == 6 and env.num_threads == 2 and env.robot == anymal_urdf
    assert env.single_observation_space.shape == (48,) and env.single_action_space.shape == (12,)
    assert env.observation_space.shape == (6, 48) and env.action_space.shape == (6, 12)
    assert env.single_action_space.dtype == np.float32
    assert np.all(env.single_action_space.high == 5.0) and np.all(np.isinf(env.single_observation_space.low))
    assert env.obs_names[:3] == ["base_lin_vel_x", "base_lin_vel_y", "base_lin_vel_z"]
    assert env.obs_names[12] == "pos_LF_HAA" and env.action_names[0] == "LF_HAA"
    assert env.max_episode_steps == 1000 and env.control_dt == pytest.approx(0.02)
    obs, infos = env.reset(seed=1)
    assert obs.dtype == np.float32 and obs.shape == (6, 48)
    assert env.single_observation_space.contains(obs[0])
    obs, rew, term, trunc, infos = env.step(env.action_space.sample())
    assert rew.dtype == np.float32 and rew.shape == (6,)
    assert term.dtype == np.bool_ and trunc.dtype == np.bool_
    assert set(infos["reward_terms"]) == set(env.reward_term_names)
    total = sum(infos["reward_terms"].values())
    assert np.allclose(np.maximum(total, 0), rew, atol=1e-6)  # only_positive_rewards
    raw = talus.VecEnv("anymal-locomotion", 2, only_positive_rewards=False)
    raw.reset(seed=1)
    _, rew, _, _, infos = raw.step(np.full((2, 12), 3.0))
    assert np.allclose(sum(infos["reward_terms"].values()), rew, atol=1e-6) and np.any(rew < 0)


@pytest.mark.parametrize("task,steps,scale", [("anymal-locomotion", 120, 1.0), ("cartpole", 300, 1.0)])
def test_bit_identical_across_thread_counts(task, steps, scale, anymal_urdf, cartpole_urdf):
    # short anymal episodes, so auto-resets (with new randomized values) happen inside the run
    opts = dict(RANDOMIZE, episode_length_s=0.9) if task == "anymal-locomotion" else \
        dict(mass_scale=(0.5, 2.0), push_velocity=0.2)
    traces = []
    for threads in (1, 2):
        with talus.VecEnv(task, 7, num_threads=threads, seed=11, **opts) as env:
            traces.append(rollout(env, steps, 5, scale))
    ended = 0
    for a, b in zip(*traces):
        assert np.array_equal(a, b)
    for k in range(1, len(traces[0]), 7):
        ended += int(np.sum(traces[0][k + 2]) + np.sum(traces[0][k + 3]))
    assert ended > 0, "no episode ended: the test would not cover auto-reset"


def test_seeds(cartpole_urdf):
    env = talus.VecEnv("cartpole", 5, num_threads=2, seed=3)
    a = env.reset(seed=7)[0]
    b = env.reset(seed=7)[0]
    c = env.reset(seed=8)[0]
    d = env.reset()[0]  # continues the streams: new values
    assert np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(b, d)
    assert not np.array_equal(a[0], a[1]), "envs share a random stream"
    assert np.all(np.abs(a) <= 0.05)


def test_final_observation_convention(cartpole_urdf):
    env = talus.VecEnv("cartpole", 4, num_threads=1)
    obs, _ = env.reset(seed=0)
    seen = 0
    for _ in range(100):
        prev = obs
        obs, rew, term, trunc, infos = env.step(np.zeros(4))
        mask = infos["_final_observation"]
        assert np.array_equal(mask, term | trunc)
        for i in np.flatnonzero(mask):
            seen += 1
            final = infos["final_observation"][i]
            assert abs(final[2]) > 0.2094 or abs(final[0]) > 2.4  # the last obs of the ended episode
            assert abs(prev[i][2]) <= 0.2095  # the one before was inside the limits
            assert np.all(np.abs(obs[i]) <= 0.05)  # obs is the first of the new episode
            assert infos["episode_length"][i] == infos["episode_return"][i] > 0
    assert seen >= 4


def test_truncation(anymal_urdf):
    env = talus.VecEnv("anymal-locomotion", 2, num_threads=1, episode_length_s=0.1)
    env.reset(seed=0)
    for k in range(5):
        obs, rew, term, trunc, infos = env.step(np.zeros((2, 12)))
    assert np.all(trunc) and not np.any(term) and np.all(infos["episode_length"] == 5)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_actions_end_only_that_env(bad, anymal_urdf):
    runs = []
    for poison in (False, True):
        env = talus.VecEnv("anymal-locomotion", 3, num_threads=2, seed=4)
        obs, _ = env.reset(seed=4)
        rng = np.random.default_rng(0)
        trace = []
        for k in range(20):
            act = rng.normal(0, 0.5, (3, 12))
            if poison and k == 7:
                act[1, 3] = bad
                before = obs[1].copy()
            obs, rew, term, trunc, infos = env.step(act)
            if poison and k == 7:
                assert term[1] and infos["nonfinite_action"][1] and rew[1] == 0
                assert np.array_equal(infos["final_observation"][1], before)
                assert not infos["nonfinite_action"][0] and not infos["nonfinite_action"][2]
            trace.append(obs[[0, 2]].copy())
        runs.append(trace)
    for a, b in zip(*runs):
        assert np.array_equal(a, b), "a NaN action in env 1 changed envs 0 and 2"


def test_all_nan_actions_never_crash(cartpole_urdf):
    env = talus.VecEnv("cartpole", 8, num_threads=2)
    env.reset()
    for _ in range(5):
        obs, rew, term, trunc, infos = env.step(np.full((8, 1), np.nan))
        assert np.all(term) and np.all(infos["nonfinite_action"]) and np.all(np.isfinite(obs))
    obs, rew, term, trunc, infos = env.step(np.full((8, 1), 1e300))  # huge but finite: clipped
    assert not np.any(infos["nonfinite_action"]) and np.all(np.isfinite(obs))


def test_randomization_in_infos(anymal_urdf):
    env = talus.VecEnv("anymal-locomotion", 16, num_threads=2, seed=2, **RANDOMIZE)
    obs, infos = env.reset(seed=2)
    ms = infos["mass_scale"]
    assert ms.shape == (16,) and np.all((ms >= 0.8) & (ms <= 1.2)) and np.ptp(ms) > 0.05
    for name, (lo, hi) in [("added_base_mass", (-1, 2)), ("com_offset_x", (-0.03, 0.03)),
                           ("friction", (0.5, 1.25)), ("motor_strength", (0.9, 1.1)), ("kd_scale", (0.8, 1.2))]:
        assert np.all((infos[name] >= lo) & (infos[name] <= hi)), name
    plain = talus.VecEnv("anymal-locomotion", 2)
    _, infos = plain.reset()
    assert np.all(infos["mass_scale"] == 1) and np.all(infos["friction"] == 1.0)


def test_urdf_task(anymal_urdf):
    from conftest import ROBOTS
    env = talus.VecEnv("urdf", 3, urdf=ROBOTS / "talus_quadruped" / "talus_quadruped.urdf")
    assert env.single_observation_space.shape == (48,)
    obs, _ = env.reset(seed=0)
    assert np.all(obs[:, 9:12] == 0)  # no command: a standing task
    for _ in range(50):
        obs, rew, term, trunc, infos = env.step(np.zeros((3, 12)))
    assert not np.any(term) and np.all(obs[:, 8] < -0.99)
    arm = talus.VecEnv("urdf", 2, urdf=ROBOTS / "double_pendulum" / "double_pendulum.urdf")
    assert arm.single_action_space.shape == (2,) and arm.single_observation_space.shape == (18,)
