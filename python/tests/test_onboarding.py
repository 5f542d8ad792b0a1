"""Issue 25 §5, any robot onboarded: the urdf task's creation warnings (talus.OnboardingWarning:
the default pose cannot stand, a non-foot link on the ground at reset, a floating robot that
looks like an arm), URDF load warnings as talus.URDFWarning (Model and VecEnv), and
talus.find_standing_pose on robots it was not written for (the shared solo12, hyq, anymal_c and
the project's talus_small_quadruped): feet under the hips within 1 cm, COM inside the support
polygon, and the urdf task started from that pose gives no standing warning and stands."""
import warnings

import numpy as np
import pytest

import talus
from conftest import ROBOTS, SHARED_ROBOTS, needs

SMALL_QUAD = ROBOTS / "talus_small_quadruped" / "talus_small_quadruped.urdf"
BASE_ARM = ROBOTS / "talus_base_arm" / "talus_base_arm.urdf"
MISSING_VISUALS = ROBOTS / "talus_missing_visuals" / "talus_missing_visuals.urdf"

# robot: (path, foot frames, hip (flexion) joint frames); the test's own view of the feet and hips
HELD_OUT = {
    "solo12": (SHARED_ROBOTS / "solo12" / "robots" / "solo12.urdf",
               ["FL_ANKLE", "FR_ANKLE", "HL_ANKLE", "HR_ANKLE"], ["FL_HFE", "FR_HFE", "HL_HFE", "HR_HFE"]),
    "hyq": (SHARED_ROBOTS / "hyq" / "robots" / "hyq_no_sensors.urdf",
            ["lf_foot_joint", "rf_foot_joint", "lh_foot_joint", "rh_foot_joint"],
            ["lf_hfe_joint", "rf_hfe_joint", "lh_hfe_joint", "rh_hfe_joint"]),
    "anymal_c": (SHARED_ROBOTS / "anymal_c" / "urdf" / "anymal.urdf",
                 ["LF_shank_fixed_LF_FOOT", "RF_shank_fixed_RF_FOOT", "LH_shank_fixed_LH_FOOT",
                  "RH_shank_fixed_RH_FOOT"], ["LF_HFE", "RF_HFE", "LH_HFE", "RH_HFE"]),
    "talus_small_quadruped": (SMALL_QUAD, ["FL_foot_fixed", "FR_foot_fixed", "RL_foot_fixed", "RR_foot_fixed"],
                              ["FL_thigh_joint", "FR_thigh_joint", "RL_thigh_joint", "RR_thigh_joint"]),
}


def quiet_env(**kw):
    """A urdf-task VecEnv with the warnings it issued (category, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = talus.VecEnv("urdf", 1, num_threads=1, **kw)
    return env, [(w.category, str(w.message)) for w in caught]


def kinds(caught, category=talus.OnboardingWarning):
    return [text for cat, text in caught if cat is category]


def inside_margin(points, p):
    """Signed distance of p inside the convex polygon of 4+ points (> 0 inside), by angle sort."""
    pts = np.asarray(points)[:, :2]
    c = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]
    d = np.inf
    for a, b in zip(pts, np.roll(pts, -1, axis=0)):
        e = b - a
        n = np.array([-e[1], e[0]]) / np.linalg.norm(e)  # inward normal of a counter-clockwise polygon
        d = min(d, float(np.dot(p[:2] - a, n)))
    return d


def test_small_quadruped_default_pose_stands_without_warning():
    env, caught = quiet_env(urdf=SMALL_QUAD)
    assert kinds(caught) == [] and env.warnings == []


def test_cannot_stand_warning_names_margin_and_fix():
    m = talus.Model.from_urdf(SMALL_QUAD)
    assert m.joint_names[1] == "FL_thigh_joint"
    # front knees bent, hind legs straight: only the hind feet touch, the COM is far ahead of them
    env, caught = quiet_env(urdf=SMALL_QUAD, default_joint_pos=[0, 0.6, -2.6] * 2 + [0, 0.6, -0.9] * 2)
    texts = kinds(caught)
    assert any("cannot stand" in t for t in texts), texts
    t = next(t for t in texts if "cannot stand" in t)
    assert "outside the support polygon of the 2 feet" in t and "RL_calf, RR_calf" in t
    assert "default_joint_pos" in t and "find_standing_pose" in t
    margin = float(t.split(" by ")[1].split(" m")[0])
    assert 0.2 < margin < 0.35  # metres outside (the hind feet ~ 0.19 m behind the trunk centre, COM ahead)
    assert env.warnings and any("cannot stand" in w for w in env.warnings)
    # the warning is true: the robot pitches forward (projected gravity's x in the base frame)
    env.reset(seed=0)
    for _ in range(50):
        obs, *_ = env.step(np.zeros((1, 12)))
    assert abs(obs[0, 6]) > 0.1


def test_base_on_ground_warning():
    # thighs swept up behind with the knees folded: the trunk is the lowest part at reset
    env, caught = quiet_env(urdf=SMALL_QUAD, default_joint_pos=[0.0, 3.0, -2.8] * 4)
    texts = kinds(caught)
    assert any("base link 'trunk' touches the ground" in t and "default_joint_pos" in t for t in texts), texts
    # the warning is true: the episode ends at once in a base contact
    obs, _ = env.reset(seed=0)
    ended = False
    for _ in range(20):
        obs, r, term, trunc, info = env.step(np.zeros((1, env.single_action_space.shape[0])))
        ended |= bool(term[0])
    assert ended


def test_floating_arm_warning_suggests_fixed_base():
    m = talus.Model.from_urdf(BASE_ARM)
    assert m.floating_base  # its root link is not 'world'
    env, caught = quiet_env(urdf=BASE_ARM)
    texts = kinds(caught)
    assert len(texts) == 1 and "looks like an arm" in texts[0] and "base=fixed" in texts[0], texts
    env, caught = quiet_env(urdf=BASE_ARM, base="fixed")
    assert kinds(caught) == []


def test_urdf_load_warnings_reach_python():
    with pytest.warns(talus.URDFWarning, match="visual mesh 'meshes/chassis.stl' not found"):
        m = talus.Model.from_urdf(MISSING_VISUALS)
    assert any("chassis.stl" in w for w in m.warnings)
    text = MISSING_VISUALS.read_text()
    with pytest.warns(talus.URDFWarning, match="not found"):
        talus.Model.from_urdf_string(text, name="cart.urdf")
    env, caught = quiet_env(urdf=MISSING_VISUALS)
    urdf_texts = kinds(caught, talus.URDFWarning)
    assert any("meshes/wheel.dae" in t for t in urdf_texts), caught
    # as errors: the warnings filter is obeyed (the load fails, nothing leaks)
    with warnings.catch_warnings():
        warnings.simplefilter("error", talus.URDFWarning)
        with pytest.raises(talus.URDFWarning):
            talus.Model.from_urdf(MISSING_VISUALS)


def test_find_standing_pose_arguments():
    with pytest.raises(talus.Error, match="no_such_link"):
        talus.find_standing_pose(SMALL_QUAD, feet=["no_such_link"])
    with pytest.raises(ValueError, match="base"):
        talus.find_standing_pose(SMALL_QUAD, base="hovering")
    with pytest.raises(ValueError, match="height"):
        talus.find_standing_pose(SMALL_QUAD, height=-1)
    pose = talus.find_standing_pose(SMALL_QUAD, height=0.25)
    assert pose["height"] == 0.25 and pose["residual"] < 1e-4
    assert set(pose["joint_pos"]) == set(talus.Model.from_urdf(SMALL_QUAD).joint_names)


@pytest.mark.parametrize("robot", sorted(HELD_OUT))
def test_standing_pose_on_held_out_robots(robot):
    path, foot_frames, hip_frames = HELD_OUT[robot]
    needs(path, f"{robot} URDF")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", talus.URDFWarning)
        pose = talus.find_standing_pose(path)
        model = talus.Model.from_urdf(path)
    q = pose["q"]
    lo, hi = model.dof_limits
    assert np.all(q[7:] >= lo[6:] - 1e-12) and np.all(q[7:] <= hi[6:] + 1e-12)  # limits respected
    assert pose["residual"] < 1e-3
    world = talus.World()
    sys = world.add_system(model)
    sys.set_state(q)
    feet = np.array([sys.frame_pose(f)[0] for f in foot_frames])
    hips = np.array([sys.frame_pose(h)[0] for h in hip_frames])
    assert np.all(np.linalg.norm(feet[:, :2] - hips[:, :2], axis=1) < 0.01), (feet, hips)
    assert np.all(feet[:, 2] < 0.05) and np.all(feet[:, 2] > -0.01)  # on the ground (foot centres)
    assert np.all(hips[:, 2] > 0.1)
    com = sys.com()
    assert inside_margin(feet, com) > 0.02
    assert pose["com_margin"] > 0.02
    # the urdf task from that pose: no standing warning, and the robot stands for 1 s
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = talus.VecEnv("urdf", 1, num_threads=1, urdf=path, default_joint_pos=pose["default_joint_pos"],
                           joint_noise=0.0, base_vel_noise=0.0)
    onboarding = [str(w.message) for w in caught if w.category is talus.OnboardingWarning]
    assert onboarding == [], onboarding
    env.reset(seed=1)
    steps = int(round(1.0 / env.control_dt))
    zero = np.zeros((1, env.single_action_space.shape[0]))
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(zero)
        assert not term[0]
    # projected gravity (obs 6..8) still points down in the base frame: the base is level
    assert obs[0, 8] < -0.95


def test_standing_pose_biped_keeps_feet_flat():
    """The project's talus_humanoid (6-joint legs, box feet, arms that are leaves too): the default
    feet are the two feet (not the hands), the soles stay level, and it stands for 1 s."""
    path = ROBOTS / "talus_humanoid" / "talus_humanoid.urdf"
    pose = talus.find_standing_pose(path)
    assert pose["feet"] == 2 and pose["residual"] < 1e-3
    assert pose["com_margin"] > 0.03  # inside the polygon of the two soles
    model = talus.Model.from_urdf(path)
    world = talus.World()
    sys = world.add_system(model)
    sys.set_state(pose["q"])
    for foot in ("l_foot", "r_foot"):
        _, R = sys.body_pose(foot)
        assert R[2, 2] > 0.9999  # the sole is level (its z axis within 0.8 degrees of vertical)
    env, caught = quiet_env(urdf=path, default_joint_pos=pose["default_joint_pos"], joint_noise=0.0,
                            base_vel_noise=0.0)
    assert kinds(caught) == []
    env.reset(seed=0)
    zero = np.zeros((1, env.single_action_space.shape[0]))
    for _ in range(int(round(1.0 / env.control_dt))):
        obs, r, term, trunc, info = env.step(zero)
        assert not term[0]
    assert obs[0, 8] < -0.99
