# Guards: python/talus/vecenv.py, python/talus/gym.py, python/talus/sb3.py, python/talus/spaces.py,
# python/src/py_vecenv.c (seeds, render), src/tasks/vecenv.c (tl_vecenv_reset_seeds), src/record/render.c.
"""Issue 25 section 4: talus.VecEnv under Gymnasium 1.x's conventions (final_obs / final_info,
the episode statistics of RecordEpisodeStatistics, metadata, spec, np_random, close/closed,
SyncVectorEnv's per-environment seeds), talus.gym.VecEnv as a gymnasium.vector.VectorEnv
subclass and the Stable-Baselines3 adapter talus.sb3.VecEnv.

Neither Gymnasium nor Stable-Baselines3 is installed on the test machine: the paths that use them
run against minimal stand-in modules put in sys.modules by the fixtures below (the documented
interface only: gymnasium.vector.VectorEnv / AutoresetMode, gymnasium.spaces.Box,
gymnasium.envs.registration.EnvSpec and register; stable_baselines3.common.vec_env.VecEnv's
constructor and abstract methods, stable_baselines3.common.monitor.Monitor); without the fixtures
the imports are blocked so the plain path is tested even where the packages exist."""
import abc
import dataclasses
import enum
import importlib
import sys
import types

import numpy as np
import pytest

import talus
import talus.gym
import talus.sb3

CARTPOLE_RAND = dict(mass_scale=(0.5, 2.0), push_velocity=0.3, init_noise=0.05)


# ---------------------------------------------------------------- stand-in modules

def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    return m


def _fake_gymnasium():
    """gymnasium, gymnasium.vector, gymnasium.spaces, gymnasium.envs(.registration): what talus uses."""

    class AutoresetMode(enum.Enum):
        NEXT_STEP = "NextStep"
        SAME_STEP = "SameStep"
        DISABLED = "Disabled"

    class VectorEnv:
        metadata = {}
        spec = None
        render_mode = None
        closed = False

        def close(self, **kwargs):
            if self.closed:
                return
            self.close_extras(**kwargs)
            self.closed = True

        def close_extras(self, **kwargs):
            pass

    class Box:
        def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
            self.dtype = np.dtype(dtype)
            self.low = np.asarray(low, dtype=self.dtype)
            self.high = np.asarray(high, dtype=self.dtype)
            self.shape = tuple(shape) if shape is not None else self.low.shape

    @dataclasses.dataclass
    class EnvSpec:
        id: str
        entry_point: object = None
        reward_threshold: float = None
        nondeterministic: bool = False
        max_episode_steps: int = None
        order_enforce: bool = True
        disable_env_checker: bool = False
        kwargs: dict = dataclasses.field(default_factory=dict)
        vector_entry_point: object = None

    registry = {}

    def register(id, **kwargs):
        registry[id] = EnvSpec(id=id, **kwargs)

    vector = _module("gymnasium.vector", VectorEnv=VectorEnv, AutoresetMode=AutoresetMode)
    spaces = _module("gymnasium.spaces", Box=Box)
    registration = _module("gymnasium.envs.registration", EnvSpec=EnvSpec, registry=registry)
    envs = _module("gymnasium.envs", registration=registration)
    gym = _module("gymnasium", vector=vector, spaces=spaces, envs=envs, register=register)
    return {"gymnasium": gym, "gymnasium.vector": vector, "gymnasium.spaces": spaces, "gymnasium.envs": envs,
            "gymnasium.envs.registration": registration}


def _fake_sb3():
    """stable_baselines3.common.vec_env.VecEnv (abstract; its constructor asks get_attr('render_mode'))
    and stable_baselines3.common.monitor.Monitor."""

    class VecEnv(abc.ABC):
        def __init__(self, num_envs, observation_space, action_space):
            self.num_envs = num_envs
            self.observation_space = observation_space
            self.action_space = action_space
            self.reset_infos = [{} for _ in range(num_envs)]
            self._seeds = [None] * num_envs
            self._options = [{} for _ in range(num_envs)]
            self.render_mode = self.get_attr("render_mode")[0]
            self.metadata = {"render_modes": []}

        @abc.abstractmethod
        def reset(self):
            """obs of new episodes"""

        @abc.abstractmethod
        def step_async(self, actions):
            """start a step"""

        @abc.abstractmethod
        def step_wait(self):
            """(obs, rewards, dones, infos)"""

        @abc.abstractmethod
        def close(self):
            """free"""

        @abc.abstractmethod
        def get_attr(self, attr_name, indices=None):
            """[value per index]"""

        @abc.abstractmethod
        def set_attr(self, attr_name, value, indices=None):
            """set per index"""

        @abc.abstractmethod
        def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
            """[result per index]"""

        @abc.abstractmethod
        def env_is_wrapped(self, wrapper_class, indices=None):
            """[bool per index]"""

        def step(self, actions):
            self.step_async(actions)
            return self.step_wait()

    class Monitor:
        pass

    vec_env = _module("stable_baselines3.common.vec_env", VecEnv=VecEnv)
    monitor = _module("stable_baselines3.common.monitor", Monitor=Monitor)
    common = _module("stable_baselines3.common", vec_env=vec_env, monitor=monitor)
    sb3 = _module("stable_baselines3", common=common)
    return {"stable_baselines3": sb3, "stable_baselines3.common": common,
            "stable_baselines3.common.vec_env": vec_env, "stable_baselines3.common.monitor": monitor}


def _install(monkeypatch, modules):
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    importlib.reload(talus.gym)
    importlib.reload(talus.sb3)


@pytest.fixture
def no_packages(monkeypatch):
    """Gymnasium and SB3 not importable (None in sys.modules makes `import` raise ImportError)."""
    _install(monkeypatch, {"gymnasium": None, "stable_baselines3": None})
    yield
    monkeypatch.undo()
    importlib.reload(talus.gym)
    importlib.reload(talus.sb3)


@pytest.fixture
def fake_gymnasium(monkeypatch):
    mods = _fake_gymnasium()
    _install(monkeypatch, dict(mods, stable_baselines3=None))
    yield mods
    monkeypatch.undo()
    importlib.reload(talus.gym)
    importlib.reload(talus.sb3)


@pytest.fixture
def fake_sb3(monkeypatch):
    mods = _fake_sb3()
    _install(monkeypatch, dict(mods, gymnasium=None))
    yield mods
    monkeypatch.undo()
    importlib.reload(talus.gym)
    importlib.reload(talus.sb3)


# ---------------------------------------------------------------- Gymnasium's info conventions

def test_final_obs_final_info_and_episode_statistics(cartpole_urdf, no_packages):
    """final_obs / final_info / episode as SyncVectorEnv (same-step) + RecordEpisodeStatistics write them,
    checked against a return/length count of our own; the old names stay as aliases."""
    env = talus.VecEnv("cartpole", 5, num_threads=2, seed=1, **CARTPOLE_RAND)
    obs, infos = env.reset()
    params = {name: infos[name].copy() for name in env.param_names}  # of each env's current episode
    returns, lengths = np.zeros(5), np.zeros(5, dtype=np.int64)
    rng = np.random.default_rng(0)
    ended = 0
    for k in range(400):
        prev = obs
        obs, rew, term, trunc, infos = env.step(rng.uniform(-1, 1, (5, 1)))
        done = term | trunc
        returns += rew
        lengths += 1
        assert np.array_equal(infos["_final_observation"], done)  # the old name: on every step
        if not done.any():  # Gymnasium's keys only on a step where an episode ended (SyncVectorEnv)
            assert not {"final_obs", "_final_obs", "final_info", "_final_info"} & set(infos)
        else:
            for key in ("_final_obs", "_final_info"):
                assert np.array_equal(infos[key], done), key
            assert np.array_equal(infos["final_obs"], infos["final_observation"])
            fi = infos["final_info"]
            assert set(fi) >= {"reward_terms", "nonfinite_action", "diverged", *env.param_names}
            assert all(np.array_equal(fi["_" + key], done) for key in fi if not key.startswith("_"))
        if done.any():
            ep = infos["episode"]
            assert np.array_equal(infos["_episode"], done) and set(ep) == {"r", "l", "t"}
            assert ep["r"].dtype == np.float64 and ep["l"].dtype == np.int64 and ep["t"].dtype == np.float64
            assert np.allclose(ep["r"], np.where(done, returns, 0), rtol=1e-6)
            assert np.array_equal(ep["l"], np.where(done, lengths, 0))
            assert np.all(ep["t"][done] > 0) and np.all(ep["t"][done] < 60) and np.all(ep["t"][~done] == 0)
            assert fi["episode"] is ep
        else:
            assert "episode" not in infos and "_episode" not in infos
        for i in np.flatnonzero(done):
            ended += 1
            assert abs(infos["final_obs"][i][2]) > 0.2094 or abs(infos["final_obs"][i][0]) > 2.4
            assert not np.array_equal(infos["final_obs"][i], obs[i]) and np.all(np.abs(obs[i]) <= 0.05)
            for name in env.param_names:  # final_info: the ENDED episode's randomized values
                assert fi[name][i] == params[name][i], name
            assert fi["mass_scale"][i] != infos["mass_scale"][i]  # infos: the new episode's
        for name in env.param_names:
            params[name][done] = infos[name][done]
        returns[done], lengths[done] = 0, 0
        assert np.all(np.abs(prev) < 1e3)
    assert ended >= 10


def test_episode_statistics_off(cartpole_urdf, no_packages):
    env = talus.VecEnv("cartpole", 3, num_threads=1, episode_statistics=False)
    env.reset(seed=0)
    ended = 0
    for _ in range(200):
        _, _, term, trunc, infos = env.step(np.ones((3, 1)))
        assert "episode" not in infos and ("final_info" in infos) == bool(np.any(term | trunc))
        ended += "final_info" in infos
        assert "episode" not in infos.get("final_info", {})
    assert ended >= 3


def test_plain_path_metadata_spec_close(cartpole_urdf, no_packages):
    assert not talus.gym.HAVE_GYMNASIUM and talus.gym.VecEnv.__mro__[1:] == (talus.VecEnv, object)
    env = talus.gym.VecEnv("cartpole", 2, num_threads=1, seed=3, max_episode_steps=77)
    assert env.metadata["autoreset_mode"] == "same-step" and env.metadata["render_fps"] == pytest.approx(50.0)
    assert isinstance(env.single_observation_space, talus.Box) and env.observation_space.shape == (2, 4)
    assert env.spec.id == "talus/cartpole-v0" and env.spec.max_episode_steps == 77 == env.max_episode_steps
    assert env.spec.vector_entry_point == "talus.gym:VecEnv" and env.spec.kwargs["max_episode_steps"] == 77
    assert env.render_mode is None and env.render() is None and env.unwrapped is env
    again = talus.gym.VecEnv(num_envs=2, **env.spec.kwargs)  # the spec's kwargs rebuild the same env
    assert again.max_episode_steps == 77 and np.array_equal(again.reset()[0], env.reset()[0])
    with pytest.raises(ImportError, match="gymnasium"):
        env.single_action_space.to_gymnasium()
    with pytest.raises(ImportError, match="gymnasium"):
        talus.gym.register_envs()
    assert not env.closed
    env.close()
    assert env.closed
    env.close()  # a second close does nothing
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
    with pytest.raises(ValueError, match="render_mode"):
        talus.VecEnv("cartpole", 1, render_mode="human")


def test_gymnasium_path(cartpole_urdf, fake_gymnasium):
    gym = fake_gymnasium["gymnasium"]
    assert talus.gym.HAVE_GYMNASIUM
    env = talus.gym.VecEnv("cartpole", 3, num_threads=1, seed=2)
    assert isinstance(env, gym.vector.VectorEnv) and isinstance(env, talus.VecEnv)
    assert env.metadata["autoreset_mode"] is gym.vector.AutoresetMode.SAME_STEP
    for space, shape in [(env.single_observation_space, (4,)), (env.single_action_space, (1,)),
                         (env.observation_space, (3, 4)), (env.action_space, (3, 1))]:
        assert isinstance(space, gym.spaces.Box) and space.shape == shape and space.dtype == np.float32
    assert np.all(env.single_action_space.high == 1.0) and np.all(env.single_action_space.low == -1.0)
    high = env.single_observation_space.high
    assert high[0] == np.float32(4.8) and np.isinf(high[1]) and env.action_space.low.shape == (3, 1)
    assert np.array_equal(env.observation_space.high, np.broadcast_to(high, (3, 4)))
    assert isinstance(env.spec, gym.envs.registration.EnvSpec) and env.spec.id == "talus/cartpole-v0"
    box = talus.Box([-1, -2], [1, 2], dtype=np.float64).to_gymnasium()
    assert isinstance(box, gym.spaces.Box) and box.dtype == np.float64 and list(box.high) == [1, 2]
    obs, infos = env.reset()
    obs2, _, _, _, infos = env.step(np.zeros((3, 1)))
    assert obs2.shape == (3, 4) and "final_observation" in infos
    env.close()  # talus's close, through Gymnasium's close/close_extras protocol
    assert env.closed and env._env is None
    ids = talus.gym.register_envs()
    assert "talus/anymal-locomotion-v0" in ids
    spec = gym.envs.registration.registry["talus/cartpole-v0"]
    assert spec.vector_entry_point == "talus.gym:VecEnv" and spec.kwargs == {"task": "cartpole"}
    # what gymnasium.make_vec does with a vector entry point: creator(num_envs=..., **spec.kwargs)
    made = talus.gym.VecEnv(num_envs=2, **spec.kwargs)
    assert made.num_envs == 2 and made.task == "cartpole"


# ---------------------------------------------------------------- seeds

def _trace(env, actions):
    """obs after reset (no seed) and obs, rewards, terminations, final_obs of each step."""
    out = []
    for a in actions:
        obs, rew, term, trunc, infos = env.step(a)
        out.append((obs.copy(), rew.copy(), term.copy(), trunc.copy(), infos["final_observation"].copy()))
    return out


def test_constructor_seed_is_the_first_reset_seed(cartpole_urdf, no_packages):
    a = talus.VecEnv("cartpole", 4, num_threads=2, seed=17, **CARTPOLE_RAND)
    b = talus.VecEnv("cartpole", 4, num_threads=1, seed=0, **CARTPOLE_RAND)
    oa, ia = a.reset()
    ob, ib = b.reset(seed=17)
    assert np.array_equal(oa, ob) and np.array_equal(ia["mass_scale"], ib["mass_scale"])
    acts = np.random.default_rng(3).uniform(-1, 1, (150, 4, 1))
    for x, y in zip(_trace(a, acts), _trace(b, acts)):
        assert all(np.array_equal(p, q) for p, q in zip(x, y))
    assert not np.array_equal(a.reset()[0], oa)  # later resets without a seed continue the streams
    # np_random: seeded from the seed as gymnasium.utils.seeding.np_random (PCG64(SeedSequence(seed)))
    c = talus.VecEnv("cartpole", 2, seed=5)
    assert c.np_random_seed == 5 and c.np_random.random() == np.random.default_rng(5).random()
    c.reset(seed=9)
    assert c.np_random_seed == 9 and c.np_random.integers(1 << 30) == np.random.default_rng(9).integers(1 << 30)
    c.reset(seed=[4, 6])
    assert c.np_random_seed == [4, 6] and c.np_random.random() == np.random.default_rng([4, 6]).random()


@pytest.mark.parametrize("threads", [1, 2])
def test_per_env_seeds_match_one_env_vecenvs(threads, cartpole_urdf, no_packages):
    """reset(seed=[s0, s1, s2]): env i runs bit for bit like VecEnv(task, 1).reset(seed=s_i), across
    auto-resets with new randomized masses and pushes (every draw comes from env i's own stream)."""
    seeds = [11, 2**63 + 5, 0]
    acts = np.random.default_rng(1).uniform(-1, 1, (300, 3, 1))
    env = talus.VecEnv("cartpole", 3, num_threads=threads, seed=99, **CARTPOLE_RAND)
    obs, infos = env.reset(seed=seeds)
    many = _trace(env, acts)
    for i, s in enumerate(seeds):
        one = talus.VecEnv("cartpole", 1, num_threads=1, seed=123, **CARTPOLE_RAND)
        o1, i1 = one.reset(seed=s)
        assert np.array_equal(o1[0], obs[i]) and i1["mass_scale"][0] == infos["mass_scale"][i]
        single = _trace(one, acts[:, i:i + 1])
        assert sum(step[2][0] for step in single) >= 3  # several episodes ended and were reset
        for x, y in zip(many, single):
            assert all(np.array_equal(p[i], q[0]) for p, q in zip(x, y))
    # numpy integers and arrays are accepted; None continues that env's stream
    a = talus.VecEnv("cartpole", 2, num_threads=1, seed=3, **CARTPOLE_RAND)
    b = talus.VecEnv("cartpole", 2, num_threads=1, seed=3, **CARTPOLE_RAND)
    a.reset(), b.reset()
    oa, _ = a.reset(seed=[np.int64(7), None])
    ob, _ = b.reset()
    one = talus.VecEnv("cartpole", 1, **CARTPOLE_RAND)
    assert np.array_equal(oa[1], ob[1]) and np.array_equal(oa[0], one.reset(seed=np.int64(7))[0][0])
    assert np.array_equal(a.reset(seed=np.array([5, 6], dtype=np.uint64))[0],
                          b.reset(seed=[np.int32(5), np.int64(6)])[0])


def test_seed_errors(cartpole_urdf, no_packages):
    env = talus.VecEnv("cartpole", 3, num_threads=1)
    for bad, msg in [([1, 2], "expected 3 seeds"), ([1, 2, -1], r"seed\[2\]"), ([1, 2.5, 3], r"seed\[1\]"),
                     (1.5, "seed"), (-1, "seed"), (2**64, "seed"), ("7", "seed"), ([1, True, 2], r"seed\[1\]")]:
        with pytest.raises(ValueError, match=msg):
            env.reset(seed=bad)
    with pytest.raises(ValueError, match="seed"):
        talus.VecEnv("cartpole", 2, seed=[1, 2])


# ---------------------------------------------------------------- Stable-Baselines3

def _check_sb3(venv, one_env_factory):
    n = venv.num_envs
    assert venv.observation_space.shape == (4,) and venv.action_space.shape == (1,)
    assert venv.seed(40) == [40 + i for i in range(n)]
    obs = venv.reset()
    assert obs.shape == (n, 4) and obs.dtype == np.float32
    assert set(venv.reset_infos[0]) >= {"mass_scale"} and len(venv.reset_infos) == n
    singles = [one_env_factory() for _ in range(n)]
    for i, e in enumerate(singles):  # SB3's seeds: env i gets 40 + i, as a 1-env VecEnv with that seed
        assert np.array_equal(e.reset(seed=40 + i)[0][0], obs[i])
    acts = np.random.default_rng(2).uniform(-0.3, 0.3, (250, n, 1))  # some falls, some time limits
    ended = truncated = 0
    lengths = np.zeros(n, dtype=int)
    for a in acts:
        venv.step_async(a)
        obs, rew, dones, infos = venv.step_wait()
        assert isinstance(infos, list) and len(infos) == n and dones.dtype == np.bool_ and rew.shape == (n,)
        lengths += 1
        for i, e in enumerate(singles):
            o1, r1, t1, tr1, inf1 = e.step(a[i:i + 1])
            assert np.array_equal(o1[0], obs[i]) and r1[0] == rew[i] and bool(t1[0] or tr1[0]) == dones[i]
            assert infos[i]["TimeLimit.truncated"] == bool(tr1[0] and not t1[0])
            if dones[i]:
                ended += 1
                truncated += infos[i]["TimeLimit.truncated"]
                assert np.array_equal(infos[i]["terminal_observation"], inf1["final_obs"][0])
                if venv.env.episode_statistics:  # cartpole: reward 1 per step
                    ep = infos[i]["episode"]
                    assert ep["l"] == lengths[i] and ep["r"] == pytest.approx(lengths[i]) and ep["t"] >= 0
                else:
                    assert "episode" not in infos[i]
                lengths[i] = 0
            else:
                assert "terminal_observation" not in infos[i] and "episode" not in infos[i]
    assert ended - truncated >= 3 and truncated >= 3
    assert venv.get_attr("task") == ["cartpole"] * n and venv.get_attr("num_envs", indices=[1]) == [n]
    assert venv.env_method("__repr__", indices=0) == [repr(venv.env)]
    venv.set_attr("render_env", 1)
    assert venv.env.render_env == 1
    with pytest.raises(ValueError, match="indices=None"):
        venv.set_attr("render_env", 0, indices=[0])
    venv.close()
    assert venv.env.closed


def test_sb3_adapter_standalone(cartpole_urdf, no_packages):
    assert not talus.sb3.HAVE_SB3
    opts = dict(CARTPOLE_RAND, max_episode_steps=20)
    venv = talus.sb3.VecEnv("cartpole", 3, num_threads=2, **opts)
    assert venv.env_is_wrapped(type("Monitor", (), {})) == [True] * 3
    assert venv.env_is_wrapped(type("TimeLimit", (), {}), indices=[0]) == [False]
    assert venv.render_mode is None
    with pytest.warns(UserWarning, match="render_mode"):
        assert venv.render() is None
    _check_sb3(venv, lambda: talus.VecEnv("cartpole", 1, **opts))
    with pytest.raises(ValueError, match="num_envs"):
        talus.sb3.VecEnv("cartpole")


def test_sb3_adapter_subclasses_sb3(cartpole_urdf, fake_sb3):
    base = fake_sb3["stable_baselines3.common.vec_env"].VecEnv
    monitor = fake_sb3["stable_baselines3.common.monitor"].Monitor
    assert talus.sb3.HAVE_SB3
    opts = dict(CARTPOLE_RAND, max_episode_steps=20)
    inner = talus.VecEnv("cartpole", 2, num_threads=1, episode_statistics=False, **opts)
    venv = talus.sb3.VecEnv(inner)  # the abstract methods are all there: it instantiates
    assert isinstance(venv, base) and venv.env is inner and venv.render_mode is None
    assert venv.env_is_wrapped(monitor) == [False, False]  # no episode statistics: not Monitor-like
    _check_sb3(venv, lambda: talus.VecEnv("cartpole", 1, **opts))


# ---------------------------------------------------------------- render_mode="rgb_array"

def test_render_rgb_array(cartpole_urdf, anymal_urdf, no_packages):
    """Frames of render_env drawn offscreen: shape, dtype, the followed cart at the centre, the same
    state -> the same bytes, a new state -> a new image, the SB3 adapter's get_images."""
    env = talus.VecEnv("cartpole", 2, num_threads=1, seed=4, render_mode="rgb_array", render_env=1)
    assert env.metadata["render_modes"] == ["rgb_array"]
    env.reset()
    img = env.render()
    assert img.shape == (240, 320, 3) and img.dtype == np.uint8
    r, g, b = (int(x) for x in img[120, 160])
    assert b > r + 60 and b > g + 60, f"centre {r, g, b}: expected the cartpole's blue cart (followed)"
    assert img[2, 2, 2] > img[2, 2, 0] + 40  # sky in the corner
    twin = talus.VecEnv("cartpole", 2, num_threads=2, seed=4, render_mode="rgb_array", render_env=1)
    twin.reset()
    assert np.array_equal(twin.render(), img)
    for _ in range(8):
        env.step(np.ones((2, 1)))
        twin.step(np.ones((2, 1)))
    moved = env.render()
    assert np.array_equal(moved, twin.render()) and not np.array_equal(moved, img)  # the pole tilts
    small = talus.VecEnv("anymal-locomotion", 1, render_mode="rgb_array", render_size=(60, 80))
    small.reset(seed=0)
    frame = small.render()
    assert frame.shape == (60, 80, 3) and len(np.unique(frame.reshape(-1, 3), axis=0)) > 20
    frames = env.render_frames()
    assert len(frames) == 2 and np.array_equal(frames[1], env.render())
    assert np.array_equal(frames[0], twin.render_frames([0])[0]) and not np.array_equal(frames[0], frames[1])
    assert np.array_equal(env.render(), moved)  # env 0 drawn in between: env 1 still the same image
    gym_env = talus.gym.VecEnv("cartpole", 3, num_threads=1, seed=4, render_mode="rgb_array")
    gym_env.reset()
    out = gym_env.render()  # Gymnasium's VectorEnv.render(): one frame per environment
    assert isinstance(out, tuple) and len(out) == 3 and all(f.shape == (240, 320, 3) for f in out)
    assert talus.gym.VecEnv("cartpole", 2).render() is None
    venv = talus.sb3.VecEnv(env)
    images = venv.get_images()
    assert venv.render_mode == "rgb_array" and len(images) == 2 and np.array_equal(images[1], env.render())
    tiled = venv.render()  # SB3: the images tiled, 2 -> 2 columns x 1 row
    assert tiled.shape == (240, 640, 3) and np.array_equal(tiled[:, 320:], images[1])
    with pytest.raises(ValueError, match="render_env"):
        talus.VecEnv("cartpole", 2, render_mode="rgb_array", render_env=2)
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.render()


@pytest.mark.skipif(bool(__import__("os").environ.get("TALUS_SANITIZED")), reason="timing under ASan")
def test_render_rate(anymal_urdf, no_packages):
    """320 x 240 frames of ANYmal per second through VecEnv.render() (docs/python.md reports the
    figure; 100 frames/s is the target on an idle core, the assertion leaves room for a loaded one)."""
    import time
    env = talus.VecEnv("anymal-locomotion", 1, num_threads=1, render_mode="rgb_array")
    env.reset(seed=0)
    env.render()
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(50):
            env.render()
        best = max(best, 50 / (time.perf_counter() - t))
    print(f"render: {best:.0f} frames/s at 320x240 (ANYmal C)")
    assert best > 30
