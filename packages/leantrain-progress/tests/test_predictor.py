"""ProgressPredictor: loading (LEANPROGRESS_MODEL), batching, ranking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from leantrain.core.errors import CheckpointError, ConfigError
from leantrain.progress import MODEL_ENV, ProgressPredictor


def test_leanprogress_model_env_is_honoured(
    trained: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match=MODEL_ENV):
        ProgressPredictor.from_pretrained()
    monkeypatch.setenv(MODEL_ENV, str(trained["dir"]))
    from_env = ProgressPredictor.from_pretrained()
    explicit = ProgressPredictor.from_pretrained(trained["dir"])
    assert from_env.predict("⊢ alpha x", "", "simp") == explicit.predict("⊢ alpha x", "", "simp")


def test_not_a_model_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=r"no config\.json"):
        ProgressPredictor.from_pretrained(tmp_path)


def test_batched_predictions_match_single_ones(trained: dict[str, Any]) -> None:
    p = ProgressPredictor.from_pretrained(trained["dir"], batch_size=4)
    rows = trained["eval_rows"][:10]
    batched = p.predict_many(
        [r["goal"] for r in rows], [r["prefix"] for r in rows], [r["tactic"] for r in rows]
    )
    single = [p.predict(r["goal"], r["prefix"], r["tactic"]) for r in rows]
    assert batched == pytest.approx(single, abs=1e-4)
    # A prefix given as a list of tactics is the newline-joined string.
    assert p.predict("⊢ bravo", ["intro", "simp"], "rfl") == p.predict(
        "⊢ bravo", "intro\nsimp", "rfl"
    )


def test_rank_orders_candidates_by_fewest_predicted_steps(trained: dict[str, Any]) -> None:
    p = ProgressPredictor.from_pretrained(trained["dir"])
    # The learnt marker words give the answer, so the goal's marker moved into the tactic does too.
    ranked = p.rank("⊢ x + y", "", ["foxtrot", "alpha", "charlie"])
    assert [t for t, _ in ranked] == ["alpha", "charlie", "foxtrot"]
    assert ranked[0][1] < ranked[1][1] < ranked[2][1]


@pytest.mark.parametrize("batch_size", [0, -1])
def test_a_batch_size_below_1_is_refused(batch_size: int) -> None:
    """-1 predicted nothing (every prediction 0: made-up metrics), 0 was a range() error."""
    with pytest.raises(ConfigError, match=f"batch_size must be at least 1, got {batch_size}"):
        ProgressPredictor(None, None, batch_size=batch_size)
