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
    env, ppo, history, evals = train_anymal.train(1, 4, 8, 0, 1, tmp_path, log=lambda *a: None,
                                                  max_iterations=2, eval_episodes=4)
    assert len(history) == 2 and ppo.env_steps == 2 * 4 * 8
    assert all(math.isfinite(h[k]) for h in history for k in ("policy_loss", "value_loss", "mean_reward"))
    assert len(evals) == 1 and evals[0]["episodes"] == 4 and evals[0]["env_steps"] == ppo.env_steps
    summary = train_anymal.save(ppo, env, history, evals, tmp_path, (0, 0, 0))
    assert (tmp_path / "policy.pt").exists() and (tmp_path / "learning_curve.png").exists()
    assert (tmp_path / "last.pt").exists() and summary["saved_policy"]["iteration"] == 2  # the one evaluation
    assert (tmp_path / "history.json").exists() and ppo.lr == pytest.approx(1e-3)  # first half: no decay yet
    assert summary["losses_finite"] and set(summary["first_met"]) == {"mean_xy_error_mps", "mean_yaw_error_radps",
                                                                      "fall_fraction", "all"}
    t = summary["time_s"]
    assert t["environment"] > 0 and t["evaluation"] > 0 and t["update_and_policy"] >= 0
    # issue 25's evaluation (--play): random commands within the issue's ranges, strict JSON (no NaN
    # token), the learning curve redrawn and a recording of the policy
    (tmp_path / "learning_curve.png").unlink()
    res = train_anymal.evaluate(tmp_path, episodes=4, seconds=1.0, record=True)
    assert (tmp_path / "learning_curve.png").exists()
    assert (tmp_path / "play.html").stat().st_size > 10000
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
