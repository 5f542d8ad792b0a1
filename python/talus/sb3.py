"""talus.sb3: a talus.VecEnv as a Stable-Baselines3 VecEnv.

``talus.sb3.VecEnv(task, num_envs, **kwargs)`` (or ``VecEnv(env)`` around an existing
``talus.VecEnv``) subclasses ``stable_baselines3.common.vec_env.VecEnv`` when Stable-Baselines3 is
importable, else it is a standalone class with the same methods. SB3's conventions:

- ``reset()`` -> obs float32 (num_envs, obs_dim) only; the seeds given by ``seed(s)`` (env i
  gets s + i, used by the next reset, as SB3's DummyVecEnv) go to ``talus.VecEnv.reset(seed=[...])``,
  so env i then runs exactly as a one-env talus.VecEnv reset with seed s + i; ``reset_infos`` holds
  each environment's reset info (its randomized parameters).
- ``step_async(actions)`` / ``step_wait()`` (and ``step``) -> (obs, rewards float32, dones bool,
  infos: a list of num_envs dicts). An ended environment is reset within the step; its info has
  ``terminal_observation`` (the last observation of the ended episode), ``TimeLimit.truncated``
  (truncated and not terminated) and, unless the talus VecEnv was made with
  ``episode_statistics=False``, ``episode = {"r", "l", "t"}`` (return, length, wall-clock seconds:
  what SB3's Monitor writes, so then ``env_is_wrapped(Monitor)`` answers True and SB3 logs
  ``ep_rew_mean`` without a Monitor or VecMonitor).
- ``get_attr`` / ``set_attr`` / ``env_method`` act on the one talus.VecEnv that holds all the
  environments: ``get_attr(name)`` gives its attribute once per requested index,
  ``env_method(name)`` calls the method once and gives the result per index, ``set_attr`` sets it
  for all environments (a strict subset of indices is refused with ValueError).
- ``get_images()``: with ``render_mode="rgb_array"`` one image per environment (SB3's
  ``render()`` tiles them).
"""
import time
import warnings

import numpy as np

from . import vecenv as _vecenv

try:
    from stable_baselines3.common.vec_env import VecEnv as _SB3VecEnv
except ImportError:
    _SB3VecEnv = object

HAVE_SB3 = _SB3VecEnv is not object


def _tile(images):
    """Images (N, H, W, 3) tiled into a near-square grid (ceil(sqrt N) columns, black filler)."""
    imgs = np.asarray(images)
    n, h, w, c = imgs.shape
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    grid = np.zeros((rows * h, cols * w, c), dtype=imgs.dtype)
    for i in range(n):
        r, k = divmod(i, cols)
        grid[r * h:(r + 1) * h, k * w:(k + 1) * w] = imgs[i]
    return grid


class VecEnv(_SB3VecEnv):
    """VecEnv(task_or_env, num_envs=None, **kwargs): the SB3 VecEnv of a talus.VecEnv (see the
    module docstring); ``env`` is the talus.VecEnv underneath."""

    def __init__(self, task_or_env, num_envs=None, **kwargs):
        if isinstance(task_or_env, _vecenv.VecEnv):
            if num_envs is not None or kwargs:
                raise ValueError("talus.sb3.VecEnv(env): num_envs and options belong to the talus.VecEnv")
            env = task_or_env
        else:
            if num_envs is None:
                raise ValueError("talus.sb3.VecEnv(task, num_envs, ...): num_envs is required")
            env = _vecenv.VecEnv(task_or_env, num_envs, **kwargs)
        self.env = env
        self._actions = None
        self._episode_start = np.full(env.num_envs, time.perf_counter())
        if HAVE_SB3:
            _SB3VecEnv.__init__(self, env.num_envs, env.single_observation_space, env.single_action_space)
        else:  # the attributes SB3's VecEnv.__init__ sets
            self.num_envs = env.num_envs
            self.observation_space = env.single_observation_space
            self.action_space = env.single_action_space
            self.reset_infos = [{} for _ in range(env.num_envs)]
            self._seeds = [None] * env.num_envs
            self._options = [{} for _ in range(env.num_envs)]
            self.render_mode = env.render_mode
            self.metadata = {"render_modes": ["human", "rgb_array"] if env.render_mode == "rgb_array" else []}

    # ---- SB3's seeding and options (the next reset uses them once) ----
    def seed(self, seed=None):
        """Seeds of the next reset: env i gets seed + i (a random base when None); returns them."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seeds = [int(seed) + i for i in range(self.num_envs)]
        return self._seeds

    def set_options(self, options=None):
        """Options of the next reset; the talus tasks take their options at construction, so only
        empty ones are accepted (ValueError otherwise)."""
        opts = options if isinstance(options, list) else [options] * self.num_envs
        if any(o for o in opts):
            raise ValueError("set_options: talus task options are given to the VecEnv constructor")
        self._options = [{} for _ in range(self.num_envs)]

    def _reset_seeds(self):
        self._seeds = [None] * self.num_envs

    def _reset_options(self):
        self._options = [{} for _ in range(self.num_envs)]

    def reset(self):
        """obs float32 (num_envs, obs_dim) of new episodes in every environment."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, infos = self.env.reset(seed=seeds)
        self.reset_infos = [{k: v[i] for k, v in infos.items()} for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        self._episode_start = np.full(self.num_envs, time.perf_counter())
        return obs

    def step_async(self, actions):
        self._actions = np.asarray(actions)

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        actions, self._actions = self._actions, None
        obs, rew, term, trunc, infos = self.env.step(actions)
        dones = term | trunc
        out = [{"TimeLimit.truncated": bool(trunc[i] and not term[i])} for i in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            now = time.perf_counter()
            final = infos["final_obs"]
            for i in ended:
                out[i]["terminal_observation"] = final[i].copy()
                if self.env.episode_statistics:
                    out[i]["episode"] = {"r": float(infos["episode_return"][i]),
                                         "l": int(infos["episode_length"][i]),
                                         "t": round(now - self._episode_start[i], 6)}
                self._episode_start[i] = now
                for key in ("nonfinite_action", "diverged"):
                    if infos[key][i]:
                        out[i][key] = True
        return obs, rew, dones, out

    def step(self, actions):
        self.step_async(actions)
        return self.step_wait()

    def close(self):
        self.env.close()

    # ---- attributes and methods (one talus.VecEnv holds every environment) ----
    def _indices(self, indices):
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def get_attr(self, attr_name, indices=None):
        value = getattr(self.env, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None):
        if sorted(self._indices(indices)) != list(range(self.num_envs)):
            raise ValueError(f"set_attr({attr_name!r}): the environments share one talus.VecEnv; set it for all "
                             f"of them (indices=None)")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def has_attr(self, attr_name):
        return hasattr(self.env, attr_name)

    def env_is_wrapped(self, wrapper_class, indices=None):
        """True for SB3's Monitor when the talus VecEnv writes episode statistics (it writes what
        Monitor does), False for any other wrapper."""
        monitor = getattr(wrapper_class, "__name__", "") == "Monitor" and self.env.episode_statistics
        return [bool(monitor) for _ in self._indices(indices)]

    def get_images(self):
        """One image per environment (uint8 (H, W, 3)) in rgb_array mode (SB3's render() tiles them)."""
        frames = self.env.render_frames()
        return list(frames) if frames is not None else [None] * self.num_envs

    if not HAVE_SB3:
        def render(self, mode=None):
            """The images of all environments tiled into one (uint8) in rgb_array mode, as SB3's
            VecEnv.render does, else None with a warning."""
            if self.render_mode != "rgb_array" or mode not in (None, "rgb_array"):
                warnings.warn("render(): create the VecEnv with render_mode='rgb_array'")
                return None
            return _tile(self.get_images())

        @property
        def unwrapped(self):
            return self
