"""talus.gym: talus.VecEnv as a Gymnasium 1.x vector environment.

``talus.gym.VecEnv`` is ``talus.VecEnv`` (same constructor, same behaviour) that, when the
``gymnasium`` package is importable, also subclasses ``gymnasium.vector.VectorEnv``: so
``isinstance(env, gymnasium.vector.VectorEnv)`` holds and Gymnasium's vector wrappers
(``gymnasium.wrappers.vector.*``), CleanRL's scripts and anything typed against VectorEnv take it.
Its ``render()`` follows ``VectorEnv.render()``: a tuple of frames, one per environment
(``talus.VecEnv.render()`` gives the one frame of ``render_env``). Without Gymnasium it is a plain
class with the same interface (the base is ``object``); which
one was chosen is ``talus.gym.HAVE_GYMNASIUM``. The base is decided when this module is first
imported.

Conventions (docs/python.md, "Gymnasium and SB3"): same-step autoreset
(``metadata["autoreset_mode"] == AutoresetMode.SAME_STEP``), ``final_obs`` / ``final_info``
with their ``_final_obs`` / ``_final_info`` masks, ``episode`` statistics in the layout of
``RecordEpisodeStatistics`` (construct with ``episode_statistics=False`` before wrapping in
that wrapper), ``reset(seed=[...])`` with one seed per environment as ``SyncVectorEnv``.

``register_envs()`` registers ``talus/<task>-v0`` for every task, so
``gymnasium.make_vec("talus/cartpole-v0", num_envs=8)`` builds this class.
"""
from . import vecenv as _vecenv

try:
    import gymnasium as _gymnasium
    from gymnasium.vector import VectorEnv as _VectorEnv
except ImportError:
    _gymnasium = None
    _VectorEnv = object

HAVE_GYMNASIUM = _gymnasium is not None


class VecEnv(_vecenv.VecEnv, _VectorEnv):
    __doc__ = ("talus.VecEnv as a gymnasium.vector.VectorEnv subclass (when Gymnasium is importable); its\n"
               "render() returns a tuple of frames, one per environment, as VectorEnv.render does.\n\n"
               + (_vecenv.VecEnv.__doc__ or ""))

    def render(self):
        """A tuple of num_envs images (uint8 (H, W, 3)) in rgb_array mode, else None (Gymnasium's
        ``VectorEnv.render()``: its RecordVideo and HumanRendering vector wrappers take it)."""
        return self.render_frames()


def register_envs():
    """Register ``talus/<task>-v0`` (vector entry point ``talus.gym:VecEnv``) with Gymnasium for
    every task of ``talus.tasks()``; returns the ids. Raises ImportError without Gymnasium."""
    if _gymnasium is None:
        raise ImportError("talus.gym.register_envs(): the gymnasium package is not installed")
    ids = []
    for task in _vecenv.tasks():
        env_id = f"talus/{task}-v0"
        if env_id not in _gymnasium.envs.registration.registry:
            _gymnasium.register(id=env_id, vector_entry_point="talus.gym:VecEnv", kwargs={"task": task})
        ids.append(env_id)
    return ids
