# Guards: python/src/py_vecenv.c, py_batch.c, py_world.c, py_model.c (no memory growth),
# src/tasks/vecenv.c.
"""No memory growth: resident set size (RSS, /proc/self/statm) before and after 100 000 env
steps of cartpole (5 envs x 20 000 step calls, randomization on, periodic resets), 20 000 of
anymal-locomotion (every randomization), and 200 rounds of creating and freeing VecEnvs,
BatchWorlds, Worlds and Models. Each phase first runs a warm-up, so allocator pools and lazily
created caches exist before the first measurement; after it, RSS stays flat (0 KB measured).
Keeping one reward array per step call alive grows RSS by about 3 MB over 20 000 calls, so the
bound of 1 MB catches a leak of one Python object per call. (The C side allocates nothing per
step at all: tests/test_tasks.c counts malloc calls.)"""
import gc
import os

import numpy as np

import pytest

import talus
from conftest import ROBOTS, SANITIZED

# AddressSanitizer keeps freed memory in its quarantine (256 MB by default), so RSS grows by
# design in a sanitizer build; the sanitizer checks leaks and use-after-free there instead.
pytestmark = pytest.mark.skipif(SANITIZED, reason="RSS is not meaningful under AddressSanitizer")

PAGE = os.sysconf("SC_PAGE_SIZE")
BOUND = 2 ** 20


def rss():
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def run_steps(env, calls, rng):
    env.reset(seed=1)
    shape = env.action_space.shape
    for k in range(calls):
        obs, rew, term, trunc, infos = env.step(rng.normal(0, 0.5, shape))
        if k % 500 == 499:
            env.reset()


def test_cartpole_100k_env_steps(cartpole_urdf):
    env = talus.VecEnv("cartpole", 5, num_threads=2, mass_scale=(0.8, 1.2), push_velocity=0.1)
    rng = np.random.default_rng(0)
    run_steps(env, 2000, rng)
    before = rss()
    run_steps(env, 20000, rng)  # 5 envs x 20 000 calls = 100 000 env steps
    grown = rss() - before
    assert grown < BOUND, f"RSS grew by {grown / 2**20:.2f} MB over 100 000 cartpole env steps"


def test_anymal_20k_env_steps(anymal_urdf):
    env = talus.VecEnv("anymal-locomotion", 50, num_threads=2, mass_scale=(0.8, 1.2), friction=(0.5, 1.2),
                       added_base_mass=(-1, 2), push_velocity=0.5, push_interval=1.0)
    rng = np.random.default_rng(0)
    run_steps(env, 100, rng)
    before = rss()
    run_steps(env, 400, rng)  # 50 envs x 400 calls = 20 000 env steps
    grown = rss() - before
    assert grown < BOUND, f"RSS grew by {grown / 2**20:.2f} MB over 20 000 anymal env steps"


def test_create_and_free(cartpole_urdf):
    quad = str(ROBOTS / "talus_quadruped" / "talus_quadruped.urdf")
    model = talus.Model.from_urdf(quad)

    def churn(n):
        for _ in range(n):
            env = talus.VecEnv("cartpole", 4, num_threads=2)
            env.step(np.zeros((4, 1)))
            env.close()
            bw = talus.BatchWorld(quad, 2, num_threads=2)
            bw.step(2)
            w = talus.World()
            s = w.add_system(model)
            s.mass_matrix()
            del bw, w, s
            talus.Model.from_urdf(quad)
            try:
                talus.Model.from_urdf_string("<robot")
            except talus.Error:
                pass

    churn(20)
    before = rss()
    churn(200)
    grown = rss() - before
    assert grown < BOUND, f"RSS grew by {grown / 2**20:.2f} MB over 200 create/free rounds"
