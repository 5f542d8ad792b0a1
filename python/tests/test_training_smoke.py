# Guards: examples/python/ppo.py, train_cartpole.py, train_anymal.py, python/talus/vecenv.py,
# python/talus/spaces.py.
"""Smoke run of the training examples (examples/python/): a few PPO iterations of each, checking
that the environments were stepped the expected number of times, episodes were recorded and
every loss is finite. The real runs (cartpole to the maximum return, ANYmal for 10 minutes) are
run by hand; their figures are in docs/python.md. ctest label: smoke."""
import json
import math
import sys

import pytest

from conftest import SOURCE_DIR

torch = pytest.importorskip("torch")
sys.path.insert(0, str(SOURCE_DIR / "examples" / "python"))


def test_cartpole_ppo_iterations(cartpole_urdf):
    import train_cartpole
    torch.set_num_threads(1)
    env, ppo, curve, history, reached = train_cartpole.train(num_envs=8, num_steps=32, max_iterations=3,
                                                             log=lambda *a: None)
    assert len(history) == 3 and ppo.env_steps == 3 * 8 * 32
    assert all(math.isfinite(h[k]) for h in history for k in ("policy_loss", "value_loss", "approx_kl"))
    assert len(ppo.episodes) > 0, "an untrained cartpole policy should drop the pole within 96 steps"
    returns = train_cartpole.evaluate(ppo, episodes=4)
    assert returns.shape == (4,) and all(1 <= r <= 500 for r in returns)


def test_anymal_ppo_iterations(anymal_urdf, tmp_path):
    import train_anymal
    torch.set_num_threads(1)
    env, ppo, history = train_anymal.train(1, 4, 8, 0, 1, tmp_path, log=lambda *a: None, max_iterations=2)
    assert len(history) == 2 and ppo.env_steps == 2 * 4 * 8
    assert all(math.isfinite(h[k]) for h in history for k in ("policy_loss", "value_loss", "mean_reward"))
    summary = train_anymal.save(ppo, env, history, tmp_path, (0, 0, 0))
    assert (tmp_path / "policy.pt").exists() and (tmp_path / "learning_curve.png").exists()
    assert summary["losses_finite"]
    # issue 25's evaluation: random commands within the issue's ranges, strict JSON (no NaN token)
    res = train_anymal.evaluate(tmp_path, episodes=4, seconds=1.0)
    text = (tmp_path / "eval.json").read_text()

    def no_nan(token):
        raise AssertionError(f"eval.json holds {token}")

    assert json.loads(text, parse_constant=no_nan) == res
    assert res["episodes"] == 4 and 0 <= res["falls"] <= 4
    if res["all_fell"]:
        assert res["mean_xy_error_mps"] is None and res["mean_yaw_error_radps"] is None
    else:
        assert res["mean_xy_error_mps"] >= 0 and res["mean_yaw_error_radps"] >= 0
    assert res["targets"] == {"mean_xy_error_mps": 0.2, "mean_yaw_error_radps": 0.3, "fall_fraction": 0.05}
