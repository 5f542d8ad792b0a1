# Guards: python/src/py_world.c (World(options=...), World.options), src/world/world_options.c.
"""World.options: tl_world_options (talus/world.h) as a dict. Reading gives every field with the C
defaults; assigning a dict changes the keys it names and nothing else; a bad value is refused by the
library's check naming the field, an unknown key or solver by ValueError, and the world is left as it
was; World(options=...) builds with them (dt= and gravity= arguments win); the settings act on the
simulation (a box dropped with erp 0 keeps its penetration, with the default erp it is pushed out)."""
import math

import pytest

import talus
from conftest import ROBOTS

BOX = str(ROBOTS / "box" / "box.urdf")

DEFAULTS = {
    "dt": 1e-3, "gravity": (0.0, 0.0, -9.81), "solver": "per_contact", "solver_max_iter": 100,
    "solver_tol": 1e-10, "sor": 1.0, "erp": 0.2, "cfm": 0.0, "contact_compliance": 3e-3,
    "contact_margin": 5e-3, "slop": 0.0, "max_recovery_speed": 1.0, "limit_margin": 0.02,
    "velocity_limits": False, "default_mu": 0.8, "default_restitution": 0.0, "default_threshold": 0.01,
}


def test_defaults():
    assert talus.World().options == DEFAULTS


def test_assign_changes_only_the_keys_given():
    w = talus.World()
    w.options = {"erp": 0.5, "solver": "pgs", "velocity_limits": True, "gravity": (0, 0, -3)}
    o = w.options
    assert o["erp"] == 0.5 and o["solver"] == "pgs" and o["velocity_limits"] is True
    assert o["gravity"] == (0.0, 0.0, -3.0) and tuple(w.gravity) == (0.0, 0.0, -3.0)
    rest = {k: v for k, v in o.items() if k not in ("erp", "solver", "velocity_limits", "gravity")}
    assert rest == {k: v for k, v in DEFAULTS.items() if k in rest}


@pytest.mark.parametrize("key,value", [("erp", 1.5), ("dt", 0.0), ("sor", 2.0), ("contact_margin", -1.0),
                                       ("solver_max_iter", 0), ("velocity_limits", 2),
                                       ("default_restitution", math.nan)])
def test_bad_value_names_the_field(key, value):
    w = talus.World()
    w.options = {"erp": 0.3}
    before = w.options
    with pytest.raises(talus.Error, match=key):
        w.options = {"cfm": 1e-3, key: value}
    assert w.options == before  # checked as a whole: cfm did not change either
    with pytest.raises(talus.Error, match=key):
        talus.World(options={key: value})


def test_unknown_key_and_solver():
    w = talus.World()
    with pytest.raises(ValueError, match="nosuch"):
        w.options = {"nosuch": 1.0}
    with pytest.raises(ValueError, match="solver"):
        w.options = {"solver": "jacobi"}
    with pytest.raises(TypeError):
        w.options = [("erp", 0.1)]
    assert w.options == DEFAULTS


def test_constructor():
    w = talus.World(options={"dt": 5e-3, "contact_margin": 0.01, "solver": "dantzig"})
    assert w.dt == 5e-3 and w.options["contact_margin"] == 0.01 and w.options["solver"] == "dantzig"
    w = talus.World(dt=2e-3, gravity=(0, 0, -1), options={"dt": 5e-3, "gravity": (0, 0, -2)})
    assert w.dt == 2e-3 and tuple(w.gravity) == (0.0, 0.0, -1.0)


def _sunk_box(options):
    """The box (0.2 m cube on robots/box) started 2 cm into the ground, 100 steps: its height."""
    w = talus.World(options=options)
    w.add_ground()
    s = w.add_system(talus.Model.from_urdf(BOX))
    q = s.q.copy()
    q[2] = 0.08
    s.set_state(q, s.u * 0)
    w.step(100)
    return s.q[2]


def test_options_act_on_the_simulation():
    assert _sunk_box({"erp": 0.0}) < 0.0805  # no position correction: it stays about 2 cm deep
    assert _sunk_box({}) > 0.1  # erp 0.2 pushes it out (at up to max_recovery_speed): above its rest height
