"""Onboarding a robot: a standing pose by inverse kinematics (``find_standing_pose``) and the
warning categories of the URDF loader and the ``urdf`` task (docs/tasks.md, "Onboarding a robot").
"""
import os

import numpy as np

from . import _talus

URDFWarning = _talus.URDFWarning
OnboardingWarning = _talus.OnboardingWarning

_BASES = {"floating": True, "fixed": False, "auto": None}


def find_standing_pose(urdf, height=None, feet=None, base="floating", height_fraction=0.7):
    """find_standing_pose(urdf, height=None, feet=None, base="floating", height_fraction=0.7) -> dict

    Joint angles that put every foot directly under its hip with the base level at ``height``
    (m above the ground), found by damped least-squares inverse kinematics in C
    (``tl_find_standing_pose``, talus/onboard.h): Gauss-Newton in the tangent space with
    Levenberg-Marquardt damping on the feet's point Jacobians, joints clamped to their limits
    after each step, three starting poses, the best kept.

    - ``urdf``: a path, or a ``talus.Model`` (used as loaded: ``base`` is then ignored).
    - ``height``: base height in m; None: ``height_fraction`` of the mean leg length (sum of the
      segment lengths from the leg's first joint to the foot) for the hips above the feet; while
      the feet cannot reach (residual > 1 mm), 0.9, 1.1, 0.8, 1.2, ..., 0.4 times it are tried.
    - ``feet``: URDF link names of the feet; None: the leaf links of the tree (a foot link fixed
      to a shank counts as the shank). The foot point is the centre of the foot body's collision
      geom farthest from its origin; its target is one foot radius above the ground.
      The hip of a leg is its first joint whose axis is within 45 degrees of the base's y axis
      (the hip flexion joint), else its first joint.
    - ``base``: "floating" (default), "fixed" or "auto", as the urdf task's ``base`` option.

    Returns a dict: ``default_joint_pos`` (float64 (na,), the joints in the task's action order:
    pass it as ``VecEnv("urdf", n, urdf=..., default_joint_pos=...)``), ``joint_pos`` ({joint
    name: angle}), ``q`` (the whole configuration, base at (0, 0, height)), ``height``,
    ``residual`` (m, the largest distance of a foot from its target: check it), ``com_margin``
    (m, signed distance of the COM's ground projection inside the feet's support polygon; > 0
    inside), ``feet`` (number of feet), ``iterations``, ``height_adjusted``. Raises talus.Error for
    a foot name that is not a link or a robot without feet; URDF load warnings are issued as
    talus.URDFWarning.
    """
    if base not in _BASES:
        raise ValueError(f"base: expected 'floating', 'fixed' or 'auto', got {base!r}")
    if isinstance(urdf, _talus.Model):
        model = urdf
    else:
        model = _talus.Model.from_urdf(os.fspath(urdf), floating_base=_BASES[base])
    if isinstance(feet, str):
        feet = [feet]
    q, info = _talus._find_standing_pose(model, height=None if height is None else float(height),
                                         feet=None if feet is None else list(feet),
                                         height_fraction=float(height_fraction))
    first = 7 if model.floating_base else 0
    joints = np.array(q[first:], dtype=np.float64)
    out = dict(info)
    out["feet"] = out.pop("nfeet")
    out["q"] = q
    out["default_joint_pos"] = joints
    out["joint_pos"] = dict(zip(model.joint_names, (float(x) for x in joints)))
    return out
