"""VecEnv: vectorized reinforcement-learning environments stepped in C.

The tasks (observation, reward, termination, reset, randomization) are written in C
(src/tasks/ of the library); one ``step`` call advances every environment on a C thread pool
without the GIL and without returning to Python per environment. Layouts, reward weights and
options of each task: docs/tasks.md.
"""
import dataclasses
import numbers
import os
import time
import warnings

import numpy as np

from . import _talus
from .spaces import Box, gymnasium_module

try:
    from ._paths import SHARED_ROBOTS_DEFAULT
except ImportError:  # a package copied without its generated paths file
    SHARED_ROBOTS_DEFAULT = None

NONFINITE_ACTION = 1
DIVERGED = 2
SAME_STEP = "same-step"  # metadata["autoreset_mode"] without Gymnasium
RENDER_MODES = ("rgb_array",)


@dataclasses.dataclass
class EnvSpec:
    """The specification of a VecEnv when Gymnasium is not installed (the fields of
    ``gymnasium.envs.registration.EnvSpec`` that a vector environment fills; with Gymnasium,
    ``VecEnv.spec`` is a Gymnasium EnvSpec with these values)."""
    id: str
    entry_point: object = None
    reward_threshold: float = None
    nondeterministic: bool = False
    max_episode_steps: int = None
    order_enforce: bool = True
    disable_env_checker: bool = False
    kwargs: dict = dataclasses.field(default_factory=dict)
    vector_entry_point: object = None


def _make_spec(task, max_episode_steps, kwargs):
    """EnvSpec ``talus/<task>-v0`` (Gymnasium's when importable), vector entry point talus.gym:VecEnv."""
    fields = dict(id=f"talus/{task}-v0", entry_point=None, max_episode_steps=max_episode_steps,
                  kwargs=dict(kwargs), vector_entry_point="talus.gym:VecEnv")
    gym = gymnasium_module()
    if gym is not None:
        try:
            return gym.envs.registration.EnvSpec(**fields)
        except (AttributeError, TypeError):  # a Gymnasium without these fields: the plain spec
            pass
    return EnvSpec(**fields)


def _seed_list(seed, n):
    """A seed argument as (kind, value): ("none", None), ("int", int) or ("list", [int or None] * n).
    ValueError names the bad seed."""
    if seed is None:
        return "none", None
    if isinstance(seed, (numbers.Integral, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if not 0 <= int(seed) < 2**64:
            raise ValueError(f"seed: expected an integer in [0, 2^64), got {int(seed)}")
        return "int", int(seed)
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"seed: expected {n} seeds (one per environment), got {len(seeds)}")
        out = []
        for i, s in enumerate(seeds):
            if s is None:
                out.append(None)
            elif isinstance(s, (numbers.Integral, np.integer)) and not isinstance(s, (bool, np.bool_)) \
                    and 0 <= int(s) < 2**64:
                out.append(int(s))
            else:
                raise ValueError(f"seed[{i}]: expected None or an integer in [0, 2^64), got {s!r}")
        return "list", out
    raise ValueError(f"seed: expected None, an integer in [0, 2^64) or a sequence of {n} of them, "
                     f"got {type(seed).__name__}")


def _masked(info, mask):
    """Gymnasium's vector-info layout: every key k of ``info`` gets ``_k`` = mask (the envs where
    it is valid)."""
    for key in list(info):
        info["_" + key] = mask
    return info


def tasks():
    """The tasks VecEnv knows: {name: one-line summary}."""
    return dict(_talus.tasks())


def _option_text(key, value):
    """A task option as the key=value text the C tasks parse."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        flat = np.asarray(value, dtype=np.float64).ravel()
        return ",".join(repr(float(x)) for x in flat)
    raise TypeError(f"task option {key}={value!r}: expected a number, a bool, a string, a path or a sequence "
                    f"of numbers")


class VecEnv:
    """VecEnv(task, num_envs, num_threads=None, seed=0, record_env=None, record_path=None,
    record_fps=60.0, render_mode=None, render_env=0, render_size=(240, 320), episode_statistics=True,
    **task_options)

    ``num_envs`` independent environments of ``task`` ("cartpole", "anymal-locomotion",
    "urdf"; see ``talus.tasks()``) stepped on ``num_threads`` C threads (None: every CPU this
    process may use). The interface is Gymnasium 1.x's vector environment (``reset``, ``step``,
    ``render``, ``close``, ``closed``, ``single_observation_space``, ``single_action_space``,
    ``observation_space``, ``action_space``, ``num_envs``, ``metadata``, ``spec``,
    ``render_mode``, ``np_random``) in the same-step autoreset mode; Gymnasium itself is only
    used when it is importable (then the spaces are ``gymnasium.spaces.Box``,
    ``metadata["autoreset_mode"]`` is ``gymnasium.vector.AutoresetMode.SAME_STEP`` and ``spec`` a
    Gymnasium EnvSpec). ``talus.gym.VecEnv`` is this class as a ``gymnasium.vector.VectorEnv``
    subclass, ``talus.sb3.VecEnv`` its Stable-Baselines3 adapter.

    Seeds and determinism: for the same seed the results are bit-identical whatever
    ``num_threads`` is. ``reset(seed=s)`` (an int) restarts environment i's random stream from
    (s, i); ``reset(seed=[s0, s1, ...])`` (one per environment, as Gymnasium's SyncVectorEnv)
    restarts environment i's stream from (s_i, 0), keyed by its own seed alone, so it then
    behaves exactly like the one environment of ``VecEnv(task, 1)`` reset with ``seed=s_i``
    (None in the list: that environment continues its stream). ``reset()`` without a seed
    continues the streams, except the first reset after construction, which uses the
    constructor's ``seed``: ``VecEnv(seed=s).reset()`` equals ``reset(seed=s)``. ``np_random``
    is a NumPy Generator seeded from the last seed (``np.random.default_rng``'s PCG64 from
    ``SeedSequence(seed)``, as ``gymnasium.utils.seeding.np_random``); the simulation never
    draws from it.

    Recording: ``record_env=i`` records environment i's world (talus.Recording: a frame after
    each reset and control step when one is due at ``record_fps`` frames per second of simulated
    time, across episodes); ``record_path`` is written by ``close()`` as one self-contained HTML
    page (3D playback with plots, opens offline), ``save_recording(path)`` writes it at any time.

    Rendering: ``render_mode="rgb_array"``: ``render()`` returns an RGB image (uint8, (H, W, 3),
    ``render_size=(H, W)``) of environment ``render_env`` drawn offscreen by the library's own
    software rasterizer (no display, no OpenGL); ``render_frames(envs=None)`` a tuple of them, one
    per environment (Gymnasium's ``VectorEnv.render()`` contract, which ``talus.gym.VecEnv.render``
    follows); ``render_mode=None`` (default): both return None.

    Warnings at creation: the URDF loader's (talus.URDFWarning: a visual mesh not found, ...) and
    the ``urdf`` task's checks of the robot (talus.OnboardingWarning: the default pose cannot
    stand, a non-foot link touches the ground at reset, a floating robot that looks like an arm),
    each text naming the option that fixes it; ``warnings`` lists their texts.

    Task options are keyword arguments (numbers, bools, strings, paths; ranges and vectors as
    sequences, e.g. ``mass_scale=(0.8, 1.2)``); an unknown option raises talus.Error listing the
    task's options. ``urdf=PATH`` selects the robot; without it the shared robots are looked up
    in $TALUS_SHARED_ROBOTS, then in ``robots_dir`` (default: ../shared/robots beside the source
    tree the package was built from).

    Conventions of ``step(actions)`` -> ``(obs, rewards, terminations, truncations, infos)``:

    - actions: float array (num_envs, act_dim) ((num_envs,) when act_dim is 1), clipped to the
      action space. A row with a NaN or Inf ends that environment's episode (terminated, reward
      0, ``infos["nonfinite_action"]``) and never reaches the simulation.
    - obs float32 (num_envs, obs_dim), rewards float32 (num_envs,), terminations and
      truncations bool (num_envs,).
    - Auto-reset in the same step (Gymnasium's ``AutoresetMode.SAME_STEP``): an environment whose
      episode ended returns the first observation of its next episode in ``obs``; the last
      observation of the ended episode is ``infos["final_obs"][i]`` (float32 (num_envs,
      obs_dim)), valid where ``infos["_final_obs"][i]`` (= terminated or truncated), and the
      info of its last step is ``infos["final_info"]`` (a dict of (num_envs,) arrays: the
      ``reward_terms``, ``nonfinite_action``, ``diverged``, the randomized parameters of the
      ENDED episode and its ``episode`` statistics; each key k with its mask ``_k``), valid
      where ``infos["_final_info"]``. As in Gymnasium's SyncVectorEnv these four keys are there
      only on a step where some episode ended. ``final_observation`` / ``_final_observation``
      (the names before Gymnasium 1.0, there on every step as before) are kept as aliases for one
      release.
    - Episode statistics as Gymnasium's ``RecordEpisodeStatistics`` writes them: on a step where
      some episode ended, ``infos["episode"] = {"r": float64 return, "l": int64 length in control
      steps, "t": float64 wall-clock seconds since the episode began, rounded to 1 us}`` (0 for
      the other environments) and ``infos["_episode"]`` = the ended mask. Construct with
      ``episode_statistics=False`` to wrap the env in Gymnasium's RecordEpisodeStatistics
      (which refuses an info that already has ``episode``).
    - infos also has ``episode_return`` and ``episode_length`` (valid where ``_final_obs``),
      ``nonfinite_action`` and ``diverged`` (bool), ``reward_terms`` ({term: float64
      (num_envs,)}, the weighted terms; the reward is their sum, clipped at 0 by the legged tasks
      unless ``only_positive_rewards=False``) and the randomized parameters of each
      environment's current episode (``mass_scale``, ``added_base_mass``, ``com_offset_x/y/z``,
      ``friction``, ``motor_strength``, ``kp_scale``, ``kd_scale``: float64 (num_envs,)).
    """

    metadata = {"autoreset_mode": SAME_STEP, "render_modes": list(RENDER_MODES)}
    spec = None
    render_mode = None
    closed = False

    def __init__(self, task, num_envs, num_threads=None, seed=0, record_env=None, record_path=None,
                 record_fps=60.0, render_mode=None, render_env=0, render_size=(240, 320), episode_statistics=True,
                 **task_options):
        self._env = None
        self.closed = True
        self.recording = None
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode: expected None or one of {RENDER_MODES}, got {render_mode!r}")
        if render_mode is not None and not hasattr(_talus._VecEnv, "render"):
            raise ValueError("render_mode='rgb_array': this build of talus has no renderer")
        seed_kind, seed_value = _seed_list(seed, 1)
        if seed_kind != "int":
            raise ValueError(f"seed: expected an integer in [0, 2^64), got {seed!r}")
        options = {}
        for key, value in task_options.items():
            if value is not None:
                options[str(key)] = _option_text(key, value)
        if "robots_dir" not in options and SHARED_ROBOTS_DEFAULT:
            options["robots_dir"] = SHARED_ROBOTS_DEFAULT
        self._env = _talus._VecEnv(task, num_envs, num_threads, seed, options)
        self.closed = False
        # URDF load warnings (talus.URDFWarning) and the urdf task's robot checks
        # (talus.OnboardingWarning), each saying its fix (docs/tasks.md, "Onboarding a robot")
        robot = self._env.info["robot"]
        self.warnings = [text for _, text in self._env.warnings]
        for kind, text in self._env.warnings:
            if kind == "urdf":
                warnings.warn(f"{robot}: {text}", _talus.URDFWarning, stacklevel=2)
            else:
                warnings.warn(f"{task} task, {robot}: {text}", _talus.OnboardingWarning, stacklevel=2)
        if record_env is not None:
            self.recording = self._env.record(int(record_env), record_path, float(record_fps))
        info = self._env.info
        self.task = info["task"]
        self.robot = info["robot"]
        self.num_envs = info["num_envs"]
        self.num_threads = info["num_threads"]
        self.max_episode_steps = info["max_episode_steps"]
        self.control_dt = info["control_dt"]
        self.obs_names = info["obs_names"]
        self.action_names = info["action_names"]
        self.param_names = info["param_names"]
        self.reward_term_names = info["term_names"]
        self.episode_statistics = bool(episode_statistics)
        n = self.num_envs
        single_obs = Box(info["obs_low"], info["obs_high"], dtype=np.float32)
        single_act = Box(info["action_low"], info["action_high"], dtype=np.float32)
        batch_obs = Box(np.broadcast_to(info["obs_low"], (n, info["obs_dim"])),
                        np.broadcast_to(info["obs_high"], (n, info["obs_dim"])), dtype=np.float32)
        batch_act = Box(np.broadcast_to(info["action_low"], (n, info["act_dim"])),
                        np.broadcast_to(info["action_high"], (n, info["act_dim"])), dtype=np.float32)
        gym = gymnasium_module()
        if gym is not None:  # Gymnasium's own spaces and autoreset enum, so its wrappers accept them
            single_obs, single_act, batch_obs, batch_act = (
                b.to_gymnasium() for b in (single_obs, single_act, batch_obs, batch_act))
        self.single_observation_space, self.single_action_space = single_obs, single_act
        self.observation_space, self.action_space = batch_obs, batch_act
        mode = SAME_STEP
        if gym is not None:
            try:
                mode = gym.vector.AutoresetMode.SAME_STEP
            except AttributeError:  # a Gymnasium before 1.1 (no AutoresetMode): the string
                pass
        self.metadata = {"autoreset_mode": mode, "render_modes": list(RENDER_MODES),
                         "render_fps": 1.0 / self.control_dt}
        self.render_mode = render_mode
        self.render_env = int(render_env)
        if not 0 <= self.render_env < n:
            raise ValueError(f"render_env: expected an environment index in [0, {n}), got {render_env}")
        self.render_size = tuple(int(x) for x in render_size)
        if len(self.render_size) != 2 or min(self.render_size) < 1:
            raise ValueError(f"render_size: expected (height, width) >= 1, got {render_size!r}")
        kwargs = dict(task=self.task, num_threads=num_threads, seed=seed, **task_options)
        if render_mode is not None:
            kwargs.update(render_mode=render_mode, render_env=self.render_env, render_size=self.render_size)
        if not self.episode_statistics:
            kwargs["episode_statistics"] = False
        self.spec = _make_spec(self.task, self.max_episode_steps, kwargs)
        self._pending_seed = seed
        self._set_np_random(seed)
        self._last_params = self._env.params()
        self._episode_start = np.full(n, time.perf_counter())

    def _core(self):
        if self._env is None:
            raise RuntimeError("this VecEnv is closed")
        return self._env

    def _set_np_random(self, entropy):
        self._np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
        self._np_random_seed = entropy

    @property
    def np_random(self):
        """A NumPy Generator seeded from the last seed given (constructor or reset), for the
        user's own sampling (Gymnasium's ``VectorEnv.np_random``); the simulation never uses it."""
        return self._np_random

    @np_random.setter
    def np_random(self, value):
        self._np_random = value
        self._np_random_seed = -1

    @property
    def np_random_seed(self):
        """The seed of ``np_random`` (an int, the list of per-env seeds, or -1 when it was set
        directly)."""
        return self._np_random_seed

    @property
    def unwrapped(self):
        return self

    def _param_infos(self, infos, params):
        for k, name in enumerate(self.param_names):
            infos[name] = params[:, k]
        return infos

    def reset(self, seed=None, options=None):
        """reset(seed=None, options=None) -> (obs, infos)

        Start a new episode in every environment. seed: None continues each environment's random
        stream (the first reset after construction uses the constructor's seed); an int restarts
        stream i from (seed, i); a sequence of num_envs ints (or None) restarts stream i from
        (seed[i], 0), as a one-env VecEnv reset with seed[i] (None: env i continues). obs float32
        (num_envs, obs_dim); infos holds the randomized parameters of the new episodes.
        ``options`` is accepted for Gymnasium compatibility and must be None.
        """
        if options is not None:
            raise ValueError("reset(options=...): task options are given to the VecEnv constructor")
        kind, value = _seed_list(seed, self.num_envs)
        core = self._core()
        if kind == "none" and self._pending_seed is not None:
            kind, value = "int", self._pending_seed
        self._pending_seed = None
        obs = core.reset(value)
        if kind == "int":
            self._set_np_random(value)
        elif kind == "list" and any(s is not None for s in value):
            self._set_np_random([s for s in value if s is not None])
        self._last_params = core.params()
        self._episode_start = np.full(self.num_envs, time.perf_counter())
        return obs, self._param_infos({}, self._last_params)

    def step(self, actions):
        """step(actions) -> (obs, rewards, terminations, truncations, infos); see the class docstring."""
        core = self._core()
        obs, rew, term, trunc, final_obs, flags, ret, length, terms = core.step(actions)
        ended_params, params = self._last_params, core.params()
        self._last_params = params
        done = term | trunc
        nonfinite = (flags & NONFINITE_ACTION) != 0
        diverged = (flags & DIVERGED) != 0
        reward_terms = {name: terms[:, k] for k, name in enumerate(self.reward_term_names)}
        ended = bool(done.any())
        infos = {
            "final_observation": final_obs,
            "_final_observation": done,
            "episode_return": ret,
            "episode_length": length,
            "nonfinite_action": nonfinite,
            "diverged": diverged,
            "reward_terms": reward_terms,
        }
        if ended:  # as SyncVectorEnv: these keys only on a step where some episode ended
            final_info = {"reward_terms": reward_terms, "nonfinite_action": nonfinite, "diverged": diverged}
            self._param_infos(final_info, ended_params)
            now = time.perf_counter()
            if self.episode_statistics:
                episode = {"r": np.where(done, ret, 0.0), "l": np.where(done, length, 0).astype(np.int64),
                           "t": np.where(done, np.round(now - self._episode_start, 6), 0.0)}
                infos["episode"], infos["_episode"] = episode, done
                final_info["episode"] = episode
            self._episode_start[done] = now
            infos["final_obs"], infos["_final_obs"] = final_obs, done
            infos["final_info"], infos["_final_info"] = _masked(final_info, done), done
        return obs, rew, term, trunc, self._param_infos(infos, params)

    def render(self):
        """The image of environment ``render_env`` (uint8 (H, W, 3)) when ``render_mode`` is
        "rgb_array", else None."""
        if self.render_mode is None:
            return None
        h, w = self.render_size
        return self._core().render(self.render_env, w, h)

    def render_frames(self, envs=None):
        """A tuple of images (uint8 (H, W, 3)), one per environment of ``envs`` (default: all, in
        order), when ``render_mode`` is "rgb_array", else None: what Gymnasium's
        ``VectorEnv.render()`` returns (``talus.gym.VecEnv.render``). One renderer serves every
        environment (they share their geometry), so each image costs one draw."""
        if self.render_mode is None:
            return None
        h, w = self.render_size
        core = self._core()
        indices = range(self.num_envs) if envs is None else [int(i) for i in envs]
        return tuple(core.render(i, w, h) for i in indices)

    def save_recording(self, path, csv=None):
        """Write the recording of ``record_env`` so far as one self-contained HTML page (and a CSV);
        recording goes on."""
        if self.recording is None:
            raise RuntimeError("this VecEnv records nothing: create it with record_env=INDEX")
        self.recording.save(path, csv)

    def close(self, **kwargs):
        """Close the recording (writing ``record_path``), then free the environments (joins the C
        threads) and set ``closed``. A second call does nothing; any other call on a closed
        VecEnv raises RuntimeError."""
        if self.closed:
            return
        self.close_extras(**kwargs)
        self.closed = True

    def close_extras(self, **kwargs):
        """Free the recording and the C environments (Gymnasium's hook behind ``close()``)."""
        if self.recording is not None:
            recording, self.recording = self.recording, None
            recording.close()
        self._env = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return (f"<talus.VecEnv '{self.task}': {self.num_envs} envs on {self.num_threads} threads, "
                f"obs {self.single_observation_space.shape}, action {self.single_action_space.shape}>")
