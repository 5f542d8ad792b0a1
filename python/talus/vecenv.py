"""VecEnv: vectorized reinforcement-learning environments stepped in C.

The tasks (observation, reward, termination, reset, randomization) are written in C
(src/tasks/ of the library); one ``step`` call advances every environment on a C thread pool
without the GIL and without returning to Python per environment. Layouts, reward weights and
options of each task: docs/tasks.md.
"""
import os
import numbers

import numpy as np

from . import _talus
from .spaces import Box

try:
    from ._paths import SHARED_ROBOTS_DEFAULT
except ImportError:  # a package copied without its generated paths file
    SHARED_ROBOTS_DEFAULT = None

NONFINITE_ACTION = 1
DIVERGED = 2


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
    """VecEnv(task, num_envs, num_threads=None, seed=0, **task_options)

    ``num_envs`` independent environments of ``task`` ("cartpole", "anymal-locomotion",
    "urdf"; see ``talus.tasks()``) stepped on ``num_threads`` C threads (None: every CPU this
    process may use). The interface is Gymnasium's vector environment (``reset``, ``step``,
    ``single_observation_space``, ``single_action_space``, ``observation_space``,
    ``action_space``, ``num_envs``, ``close``); Gymnasium itself is not imported.

    Determinism: for the same seed the results are bit-identical whatever ``num_threads`` is;
    environment i draws its random numbers from its own stream, keyed by (seed, i).

    Recording: ``record_env=i`` records environment i's world (talus.Recording: a frame after
    each reset and control step when one is due at ``record_fps`` frames per second of simulated
    time, across episodes); ``record_path`` is written by ``close()`` as one self-contained HTML
    page (3D playback with plots, opens offline), ``save_recording(path)`` writes it at any time.

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
    - Auto-reset in the same step: an environment whose episode ended returns the first
      observation of its next episode in ``obs``; the last observation of the ended episode is
      ``infos["final_observation"][i]``, valid where ``infos["_final_observation"][i]``
      (= terminated or truncated), as in Gymnasium's vector environments.
    - infos also has ``episode_return`` and ``episode_length`` (valid where
      ``_final_observation``), ``nonfinite_action`` and ``diverged`` (bool), ``reward_terms``
      ({term: float64 (num_envs,)}, the weighted terms; the reward is their sum, clipped at 0 by
      the legged tasks unless ``only_positive_rewards=False``) and the
      randomized parameters of each environment's current episode (``mass_scale``,
      ``added_base_mass``, ``com_offset_x/y/z``, ``friction``, ``motor_strength``,
      ``kp_scale``, ``kd_scale``: float64 (num_envs,)).
    """

    metadata = {"autoreset_mode": "same-step"}

    def __init__(self, task, num_envs, num_threads=None, seed=0, record_env=None, record_path=None,
                 record_fps=60.0, **task_options):
        options = {}
        for key, value in task_options.items():
            if value is not None:
                options[str(key)] = _option_text(key, value)
        if "robots_dir" not in options and SHARED_ROBOTS_DEFAULT:
            options["robots_dir"] = SHARED_ROBOTS_DEFAULT
        self._env = _talus._VecEnv(task, num_envs, num_threads, seed, options)
        self.recording = None
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
        self.single_observation_space = Box(info["obs_low"], info["obs_high"], dtype=np.float32)
        self.single_action_space = Box(info["action_low"], info["action_high"], dtype=np.float32)
        n = self.num_envs
        self.observation_space = Box(np.broadcast_to(info["obs_low"], (n, info["obs_dim"])),
                                     np.broadcast_to(info["obs_high"], (n, info["obs_dim"])), dtype=np.float32)
        self.action_space = Box(np.broadcast_to(info["action_low"], (n, info["act_dim"])),
                                np.broadcast_to(info["action_high"], (n, info["act_dim"])), dtype=np.float32)

    def _core(self):
        if self._env is None:
            raise RuntimeError("this VecEnv is closed")
        return self._env

    def _param_infos(self, infos):
        params = self._core().params()
        for k, name in enumerate(self.param_names):
            infos[name] = params[:, k]
        return infos

    def reset(self, seed=None, options=None):
        """reset(seed=None, options=None) -> (obs, infos)

        Start a new episode in every environment. seed: None continues each environment's
        random stream; an int restarts stream i from (seed, i). obs float32 (num_envs, obs_dim);
        infos holds the randomized parameters of the new episodes. ``options`` is accepted for
        Gymnasium compatibility and must be None.
        """
        if options is not None:
            raise ValueError("reset(options=...): task options are given to the VecEnv constructor")
        if seed is not None and not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed: expected None or an integer in [0, 2^64), got {type(seed).__name__}")
        obs = self._core().reset(None if seed is None else int(seed))
        return obs, self._param_infos({})

    def step(self, actions):
        """step(actions) -> (obs, rewards, terminations, truncations, infos); see the class docstring."""
        obs, rew, term, trunc, final_obs, flags, ret, length, terms = self._core().step(actions)
        infos = {
            "final_observation": final_obs,
            "_final_observation": term | trunc,
            "episode_return": ret,
            "episode_length": length,
            "nonfinite_action": (flags & NONFINITE_ACTION) != 0,
            "diverged": (flags & DIVERGED) != 0,
            "reward_terms": {name: terms[:, k] for k, name in enumerate(self.reward_term_names)},
        }
        return obs, rew, term, trunc, self._param_infos(infos)

    def save_recording(self, path, csv=None):
        """Write the recording of ``record_env`` so far as one self-contained HTML page (and a CSV);
        recording goes on."""
        if self.recording is None:
            raise RuntimeError("this VecEnv records nothing: create it with record_env=INDEX")
        self.recording.save(path, csv)

    def close(self):
        """Close the recording (writing ``record_path``), then free the environments (joins the C
        threads). Further calls raise RuntimeError."""
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
