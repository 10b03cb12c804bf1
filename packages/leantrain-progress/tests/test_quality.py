"""The progress model really learns: on held-out real proofs it beats the median predictor with
predictions that vary; long inputs keep the candidate tactic and the goal's conclusion; the
target transform round-trips through save / load."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from leantrain.core.lifelong import final_checkpoint
from leantrain.progress import ProgressPredictor, ProgressTrainer, load_progress_data
from leantrain.progress.dataset import build_text, fit_text, fit_texts, split_goal
from leantrain.progress.target import TargetTransform
from leantrain.progress.tiny_model import build_tiny_tokenizer
from progress_helpers import SHARED_DATA

MATHLIB = SHARED_DATA / "mathlib-sample" / "test.json"
LB4 = SHARED_DATA / "leandojo-benchmark-4-head" / "test_head.json"


def _real_export(root: Path) -> Path:
    """The export the quality benchmark trains on (tools/bench/quality.py's ``mix/``): the LB4
    head and mathlib-sample imported into one database and merged (random split, default seed
    and fractions)."""
    export = pytest.importorskip("leantrain.export", reason="builds the export: leantrain-export")
    if not (LB4.is_file() and MATHLIB.is_file()):
        pytest.skip(f"real data absent: {LB4} / {MATHLIB} (see ../shared/data/README.md)")
    db = export.Database(root / "mix.db")
    for source in (LB4, MATHLIB):
        db.import_path(source)
    from leantrain.export.export_merged import export_merged_data

    export_merged_data(db, None, root / "mix")
    return root / "mix"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A tiny model trained with every default (summary line, Huber loss, 64 tokens, 6 epochs,
    best epoch by val MAE) on the random train split of the benchmark's export; the test split
    is held out."""
    root = tmp_path_factory.mktemp("real")
    data = _real_export(root)
    trainer = ProgressTrainer(
        data, output_dir=root / "run", seed=0, report_to="none", disable_tqdm=True
    )
    trainer.train()
    return {
        "trainer": trainer,
        "train": load_progress_data(data, splits=["train"]),
        "test": load_progress_data(data, splits=["test"]),
        "source": "LB4 head + mathlib-sample",
    }


@pytest.mark.slow
def test_beats_the_median_predictor_with_spread_on_held_out_proofs(real: dict[str, Any]) -> None:
    test = real["test"]
    labels = np.array([r["steps_remaining"] for r in test], dtype=float)
    median = float(np.median([r["steps_remaining"] for r in real["train"]]))
    preds = np.array(
        ProgressPredictor.from_pretrained(real["trainer"].output_dir).predict_many(
            [r["goal"] for r in test], [r["prefix"] for r in test], [r["tactic"] for r in test]
        )
    )
    model_mae, model_mse = np.mean(np.abs(preds - labels)), np.mean((preds - labels) ** 2)
    median_mae, median_mse = np.mean(np.abs(median - labels)), np.mean((median - labels) ** 2)
    info = (real["source"], len(test), preds.std(), model_mae, median_mae, model_mse, median_mse)
    assert preds.std() > 0.1 * labels.std(), info  # not a constant
    assert model_mae < median_mae and model_mse < median_mse, info


@pytest.mark.slow
def test_the_target_transform_round_trips_through_save_and_load(real: dict[str, Any]) -> None:
    trainer, test = real["trainer"], real["test"][:20]
    target = TargetTransform.from_model(trainer.model)
    assert target is not None and target.transform == "log1p" and target.std > 0
    args = ([r["goal"] for r in test], [r["prefix"] for r in test], [r["tactic"] for r in test])
    in_memory = trainer.predictor().predict_many(*args)
    reloaded = ProgressPredictor.from_pretrained(trainer.output_dir)
    assert TargetTransform.from_model(reloaded.model) == target
    assert reloaded.predict_many(*args) == in_memory
    assert min(in_memory) >= 0  # steps, not the standardised log target
    config = json.loads((final_checkpoint(trainer.output_dir) / "config.json").read_text())
    assert config["progress_target"] == dataclasses.asdict(target)  # beside the model


def test_target_transform_inverts_exactly() -> None:
    steps = [0, 1, 2, 3, 5, 8, 40, 93]
    t = TargetTransform.fit(steps)
    z = t.forward(steps)
    assert abs(float(np.mean(z))) < 1e-9 and abs(float(np.std(z)) - 1) < 1e-9
    assert np.allclose(t.inverse(z), steps)
    assert TargetTransform().inverse([-2.0, 3.5]).tolist() == [-2.0, 3.5]  # the seed's: raw


LONG_HYPS = "".join(f"h{i} : f (g {i}) = some_long_lemma_name_{i} x y z\n" for i in range(120))
LONG_ROW = {
    "goal": "x y z : ℕ\n" + LONG_HYPS + "⊢ x + (y + z) = z + y + x",
    "prefix": "\n".join(f"have h{i} := foo_{i} x" for i in range(80)),
    "tactic": "rw [Nat.add_comm, Nat.add_assoc]",
}


@pytest.mark.parametrize("max_length", [64, 96, 256])
def test_truncation_keeps_the_tactic_and_the_conclusion(max_length: int) -> None:
    tok = build_tiny_tokenizer([build_text(**LONG_ROW)] * 3, vocab_size=300)
    full = build_text(**LONG_ROW)
    assert len(tok(full)["input_ids"]) > 4 * max_length
    text = fit_text(tok, LONG_ROW["goal"], LONG_ROW["prefix"], LONG_ROW["tactic"], max_length)
    assert len(tok(text)["input_ids"]) <= max_length
    assert text.endswith("Candidate tactic:\n" + LONG_ROW["tactic"])
    assert "⊢ x + (y + z) = z + y + x\n\nPrefix:\n" in text
    # What is left holds the hypotheses nearest the conclusion and the latest tactics.
    if max_length >= 96:
        assert "h119 : f (g 119)" in text and "have h79 := foo_79 x" in text
        assert "h0 :" not in text and "have h0 :=" not in text
    # A row that fits is unchanged; the batched form agrees with the single one.
    short = {"goal": "n : ℕ\n⊢ n + 0 = n", "prefix": "", "tactic": "simp"}
    assert fit_text(tok, **short, max_length=max_length) == build_text(**short)
    rows = [LONG_ROW, short]
    assert fit_texts(
        tok,
        [r["goal"] for r in rows],
        [r["prefix"] for r in rows],
        [r["tactic"] for r in rows],
        max_length,
    ) == [text, build_text(**short)]


def test_truncation_with_a_slow_byte_tokenizer() -> None:
    from transformers import ByT5Tokenizer

    tok = ByT5Tokenizer()
    text = fit_text(tok, LONG_ROW["goal"], LONG_ROW["prefix"], LONG_ROW["tactic"], 200)
    assert len(tok(text)["input_ids"]) <= 200
    assert text.endswith(LONG_ROW["tactic"]) and "⊢ x + (y + z) = z + y + x" in text


def test_split_goal() -> None:
    assert split_goal("a : ℕ\n⊢ a = a") == ("a : ℕ\n", "⊢ a = a", "")
    assert split_goal("⊢ p\n  ∧ q\n\ncase h\n⊢ r") == ("", "⊢ p\n  ∧ q", "\n\ncase h\n⊢ r")
    assert split_goal("no goals") == ("", "no goals", "")


def test_warns_once_when_the_tokenizer_maps_many_tokens_to_unknown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from leantrain.progress import dataset

    tok = build_tiny_tokenizer(["abc def"] * 5, vocab_size=50)
    ids = tok(["abc ⊢ ℝ ∀ def", "ℝ ℝ ℝ"])["input_ids"]
    dataset._warned.discard(str(tok.name_or_path or type(tok).__name__))
    with caplog.at_level("WARNING", logger="leantrain.progress"):
        assert dataset.warn_unknown_tokens(tok, ids) > 0.3
        dataset.warn_unknown_tokens(tok, ids)
    assert sum("unknown" in r.message or "[UNK]" in r.message for r in caplog.records) == 1
    assert dataset.warn_unknown_tokens(tok, tok(["abc def"])["input_ids"]) == 0.0
