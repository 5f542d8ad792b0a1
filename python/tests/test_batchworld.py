# Guards: python/src/py_batch.c, python/src/py_world.c (zero-copy views, the GIL),
# src/batch/batch.c.
"""talus.BatchWorld and talus.World: zero-copy state views, bit-identical to single worlds and
across thread counts, the GIL released while C steps, concurrent calls refused."""
import threading
import time

import numpy as np
import pytest

import talus
from conftest import ROBOTS

QUADRUPED = str(ROBOTS / "talus_quadruped" / "talus_quadruped.urdf")


def start_states(n, nq, seed):
    model = talus.Model.from_urdf(QUADRUPED)
    rng = np.random.default_rng(seed)
    q = np.tile(model.default_q, (n, 1))
    q[:, 2] = 0.6
    q[:, 7:] += rng.uniform(-0.2, 0.2, (n, nq - 7))
    u = np.zeros((n, model.nv))
    u[:, :2] = rng.uniform(-0.5, 0.5, (n, 2))
    kp = np.zeros(model.nv)
    kp[6:] = 300.0
    return model, q, u, kp, kp / 30.0


def stepped_batch(threads, n=5, steps=300):
    bw = talus.BatchWorld(QUADRUPED, n, num_threads=threads)
    model, q, u, kp, kd = start_states(n, bw.nq, 0)
    bw.set_state(q, u)
    bw.set_pd_gains(kp, kd)
    bw.set_pd_targets(np.tile(model.default_q, (n, 1)))
    bw.step(steps)
    return bw, model, q, u, kp, kd


def test_views_are_zero_copy_and_read_only():
    bw = talus.BatchWorld(QUADRUPED, 4, num_threads=2)
    view = bw.q
    assert view.shape == (4, 19) and view.dtype == np.float64 and not view.flags.writeable
    assert bw.u.shape == (4, 18)
    assert view.__array_interface__["data"][0] == bw.q.__array_interface__["data"][0]
    before = view.copy()
    bw.step(10)  # the view held from before sees the new state: no copy was made
    assert not np.array_equal(before, view) and np.array_equal(view, bw.q)
    del bw  # the view keeps the batch alive
    assert np.all(np.isfinite(view))


def test_batch_equals_single_worlds_and_thread_counts():
    results = [stepped_batch(t)[0].q.copy() for t in (1, 2, 3)]
    assert np.array_equal(results[0], results[1]) and np.array_equal(results[0], results[2])
    bw, model, q, u, kp, kd = stepped_batch(1)
    for e in range(bw.num_envs):
        world = talus.World()
        world.add_ground(friction=0.8)
        sys = world.add_system(model)
        sys.set_state(q[e], u[e])
        sys.set_pd_gains(kp, kd)
        sys.set_pd_targets(model.default_q)
        world.step(300)
        assert np.array_equal(sys.q, bw.q[e]) and np.array_equal(sys.u, bw.u[e])
    assert np.ptp(bw.q[:, 2]) > 1e-4, "the envs should differ"


def test_gil_is_released_while_stepping():
    bw = talus.BatchWorld(QUADRUPED, 2, num_threads=1)
    model, q, u, kp, kd = start_states(2, bw.nq, 1)
    bw.set_state(q, u)
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    start = ticks
    t0 = time.perf_counter()
    bw.step(4000)  # tens of ms of C work
    elapsed = time.perf_counter() - t0
    during = ticks - start
    done.set()
    t.join()
    # with the GIL held the counter thread could not run at all during the step
    assert elapsed > 0.02 and during > 1000, (elapsed, during)


def test_concurrent_calls_are_refused_not_raced():
    bw = talus.BatchWorld(QUADRUPED, 2, num_threads=1)
    world = talus.World()
    sys = world.add_system(talus.Model.from_urdf(QUADRUPED))
    errors = []

    def poke():
        for _ in range(2000):
            for call in (lambda: bw.q, lambda: bw.set_pd_gains(0.0, 0.0), lambda: sys.q,
                         lambda: sys.mass_matrix(), lambda: world.step()):
                try:
                    call()
                except RuntimeError as e:
                    errors.append(str(e))

    t = threading.Thread(target=poke)
    t.start()
    for _ in range(20):
        for call in (lambda: bw.step(500), lambda: world.step(500)):
            try:
                call()
            except RuntimeError as e:  # the other thread was stepping the world
                errors.append(str(e))
    t.join()
    assert errors and all("stepping in another thread" in e for e in errors)


def test_world_api(anymal_urdf):
    world = talus.World(dt=0.002)
    assert world.dt == 0.002 and np.array_equal(world.gravity, [0, 0, -9.81])
    world.add_ground(friction=1.0)
    model = talus.Model.from_urdf(anymal_urdf)
    sys = world.add_system(model)
    q = model.default_q
    q[2] = 0.7
    sys.set_state(q)
    assert np.array_equal(sys.u, np.zeros(18))
    world.step(300)
    c = sys.contacts()
    assert c["position"].shape[1] == 3 and len(c["depth"]) == len(c["body"]) >= 1
    # the ground pushes the robot up: impulses on it point up, normals into it
    assert np.all(c["normal"][:, 2] > 0.99) and np.sum(c["impulse"][:, 2]) > 0
    assert all(s.name == "anymal" for s in world.systems) and world.systems[0].index == 0
    world.integrate1()
    M = sys.mass_matrix()
    world.integrate2()
    assert M.shape == (18, 18) and world.time == pytest.approx(301 * 0.002)
    mass, com, inertia = sys.link_inertial("base_inertia")
    sys.set_link_inertial("base_inertia", 2 * mass, com, 2 * inertia)
    assert sys.total_mass == pytest.approx(model.total_mass + mass)
    kinetic, potential = sys.energy()
    assert kinetic >= 0 and potential > 0


def test_world_files():
    path = str(ROBOTS / "worlds" / "two_quadrupeds.xml")
    world = talus.World.from_file(path)
    left, right = world.systems
    assert left.nq == right.nq == 19 and world.dt == 0.001
    assert left.q[1] == pytest.approx(0.75) and right.q[1] == pytest.approx(-0.75)
    world.step(500)  # both stand (the file's stand controller): bases stay up
    assert 0.3 < left.q[2] < 0.7 and 0.3 < right.q[2] < 0.7
    # a batch of the same world file: both systems of each env, concatenated
    bw = talus.BatchWorld(path, 3, num_threads=2)
    assert bw.nq == 38 and bw.nv == 36 and bw.q.shape == (3, 38)
    bw.step(500)
    assert np.array_equal(bw.q[0], np.concatenate([left.q, right.q]))
    assert np.array_equal(bw.q[0], bw.q[2])
    with pytest.raises(talus.Error) as info:
        talus.World.from_file(str(ROBOTS / "talus_quadruped" / "talus_quadruped.urdf"))
    assert "talus_world" in str(info.value) or info.value.file
