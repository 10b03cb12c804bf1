"""The summary line of the model input, the L1-like training losses, and evaluation on the
export's val split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from leantrain.core.errors import ConfigError
from leantrain.progress import ProgressConfig, ProgressPredictor, ProgressTrainer
from leantrain.progress.dataset import build_text, fit_text, fit_texts
from leantrain.progress.loss import make_loss
from leantrain.progress.summary import bucket, input_format_of, summarize
from leantrain.progress.tiny_model import build_tiny_tokenizer
from progress_helpers import tactic, theorem, tiny_options, write_json

STATE = "case h\nx y : ℕ\nh : x < y\n⊢ x ≤ y\n\ncase g\nz : ℕ\n⊢ z = z"


def test_buckets_are_powers_of_two() -> None:
    assert [bucket(n) for n in (0, 1, 2, 3, 4, 7, 8, 100)] == [
        "0",
        "1",
        "2-3",
        "2-3",
        "4-7",
        "4-7",
        "8-15",
        "64-127",
    ]


def test_summary_counts_steps_goals_and_hypotheses() -> None:
    prefix = "intro x\nhave h : x = x := by\n  rfl\nconstructor"  # 3 tactics, one multi-line
    line = summarize(STATE, prefix, "exact le_of_lt h")
    assert line == (
        "Tactic: exact · Steps so far: 2-3 · Goals: 2-3 · Hypotheses: 2-3 · "
        f"Goal size: {bucket(len(STATE))}"
    )
    assert "Steps so far: 0 · Goals: 1 · Hypotheses: 0" in summarize("⊢ True", "", "trivial")
    assert "Goals: 0" in summarize("no goals", None, "rfl")
    assert build_text("⊢ p", "", "rfl", summary=True).startswith("Tactic: rfl · ")
    assert build_text("⊢ p", "", "rfl", summary=True).endswith(build_text("⊢ p", "", "rfl"))


def test_truncation_keeps_the_summary_of_the_whole_row() -> None:
    hyps = "".join(f"h{i} : f (g {i}) = some_lemma_{i} x y z\n" for i in range(100))
    goal, prefix = hyps + "⊢ x = x", "\n".join(f"have h{i} := foo_{i} x" for i in range(40))
    tok = build_tiny_tokenizer([build_text(goal, prefix, "simp", summary=True)] * 3, vocab_size=300)
    text = fit_text(tok, goal, prefix, "simp", 96, summary=True)
    assert len(tok(text)["input_ids"]) <= 96
    # counted on the row before it was cut: 40 tactics so far, 100 hypotheses
    assert text.startswith(summarize(goal, prefix, "simp") + "\n\nGoal:\n")
    assert "Steps so far: 32-63" in text and "Hypotheses: 64-127" in text
    assert text.endswith("Candidate tactic:\nsimp") and "⊢ x = x" in text
    assert fit_texts(tok, [goal], [prefix], ["simp"], 96, summary=True) == [text]


def test_losses_aim_at_the_median() -> None:
    import torch

    labels = torch.tensor([0.0, 0.0, 0.0, 10.0])  # median 0, mean 2.5
    for name, best in (("l1", 0.0), ("huber", 0.0), ("mse", 2.5)):
        loss = make_loss(name, huber_delta=0.5)  # type: ignore[arg-type]
        pred = torch.zeros(4, 1, requires_grad=True)
        opt = torch.optim.SGD([pred], lr=0.05)
        for _ in range(400):
            opt.zero_grad()
            shared = pred.mean().expand(4, 1)  # one constant prediction for every row
            loss({"logits": shared}, labels).backward()
            opt.step()
        assert float(pred.detach().mean()) == pytest.approx(best, abs=0.3), name
    # summed over the rows and divided by the Trainer's count of the accumulated batch
    out = make_loss("l1")({"logits": torch.ones(2, 1)}, torch.zeros(2), num_items_in_batch=4)
    assert float(out) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="unknown loss"):
        make_loss("hinge")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="huber_delta"):
        ProgressConfig(huber_delta=0, output_dir="x")


def _export(root: Path) -> Path:
    """An export directory with train and val splits (random/), rows easy to tell apart."""

    def proof(name: str, n: int) -> dict[str, Any]:
        return theorem(name, [tactic(f"simp [l{i}]", f"⊢ p{i} {name}") for i in range(n)])

    write_json(root / "random" / "train.json", [proof(f"t{i}", 1 + i % 3) for i in range(12)])
    write_json(root / "random" / "val.json", [proof("v0", 2), proof("v1", 1)])
    write_json(root / "random" / "test.json", [proof("s0", 2)])
    return root


@pytest.mark.slow
def test_an_export_is_evaluated_on_its_val_split(tmp_path: Path) -> None:
    data = _export(tmp_path / "export")
    opts = tiny_options(epochs=1, max_length=48, report_to="none")
    result = ProgressTrainer(data, output_dir=tmp_path / "run", **opts).train()
    assert result["final"]["train_rows"] == 24  # every training row: 12 proofs, 24 tactics
    assert result["final"]["eval_rows"] == 3  # the val split's
    off = ProgressTrainer(data, output_dir=tmp_path / "off", eval_split="none", **opts).train()
    assert off["final"]["train_rows"] + off["final"]["eval_rows"] == 24
    model = ProgressPredictor.from_pretrained(tmp_path / "run").model
    assert model.config.progress_input == "summary"
    assert input_format_of(model, "plain") == "summary"


def test_models_without_the_key_read_the_seeds_text() -> None:
    from types import SimpleNamespace

    target = {"transform": "log1p", "mean": 1.0, "std": 1.0}
    before = SimpleNamespace(config=SimpleNamespace(progress_target=target))
    assert input_format_of(before, "summary") == "plain"  # a progress model from before
    base = SimpleNamespace(config=SimpleNamespace())
    assert input_format_of(base, "summary") == "summary"  # a base model: the config's
