"""Talus: articulated-robot simulation in generalized coordinates, from Python.

The C library does the work; this package is its CPython extension (``talus._talus``,
written in C with the NumPy C API) plus a thin Python layer for the Gymnasium-style
spaces of the vectorized environments.

Conventions (RaiSim's): SI units, world z up, gravity (0, 0, -9.81). For a floating base
q = [x, y, z, qw, qx, qy, qz, joints...] and u = [v, w, joint rates...] with v, w the base
linear and angular velocity in the WORLD frame. Arrays are float64 (float32 / bool for
vectorized-environment outputs), matrices row-major.

Objects
-------
Model       a compiled robot: ``Model.from_urdf(path)``, ``Model.from_urdf_string(xml)``
World       gravity, time step, ground, systems, the two-phase step
System      one robot in a World: state, M, h, Jacobians, PD control, contacts, randomization
BatchWorld  N worlds stepped in C on a thread pool, batched state as NumPy views
VecEnv      N environments of a task ("cartpole", "anymal-locomotion", "urdf") stepped in C,
            Gymnasium 1.x's vector-env conventions (Gymnasium itself is not needed);
            talus.gym.VecEnv: the same as a gymnasium.vector.VectorEnv subclass (with
            Gymnasium), talus.sb3.VecEnv: a Stable-Baselines3 VecEnv adapter
sweep       a dynamics-randomization sweep (the runner of `talus sweep`), rows as NumPy arrays
Viewer      the live view in the browser as a control panel: Viewer(world).run(controller_fn), poll()
Error       raised for every error of the C library (a RuntimeError)
find_standing_pose  joint angles that put a robot's feet under its hips at a height (inverse kinematics)
URDFWarning, OnboardingWarning  warnings of the URDF loader and of the "urdf" task's robot checks
have_viewer True when the web viewer is built in (HTML recordings need it; CSV recordings do not)
"""
from ._talus import BatchWorld, Error, Model, System, World, __version__, cpu_count, have_viewer
from .onboarding import OnboardingWarning, URDFWarning, find_standing_pose
from .spaces import Box
from .sweep import SweepResult, sweep
from .vecenv import VecEnv, tasks
from .viewer import Viewer

__all__ = ["Model", "World", "System", "BatchWorld", "VecEnv", "Box", "Error", "tasks", "cpu_count", "sweep",
           "SweepResult", "have_viewer", "Viewer", "__version__", "find_standing_pose", "URDFWarning",
           "OnboardingWarning"]
