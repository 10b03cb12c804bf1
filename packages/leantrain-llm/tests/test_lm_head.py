"""The LM head projects only labelled positions on a CPU, with the loss plain TRL computes."""

from __future__ import annotations

import json

import pytest


def _fused_tiny_model():
    import trl.trainer.utils
    from leantrain.llm.tiny_model import build_tiny_model

    model, tok = build_tiny_model()
    trl.trainer.utils.add_fused_lm_head(model, outputs=("log_probs", "entropy", "is_top1"))
    return model, tok


def _batch(vocab: int):
    import torch

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(3, vocab, (3, 40), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 30:] = 0  # a padded row
    labels = ids.clone()
    labels[:, :28] = -100  # the prompt
    labels[mask == 0] = -100
    return ids, mask, labels


def _count_projected_rows(monkeypatch) -> list[int]:
    """The number of positions TRL's LM head projects, one entry per call."""
    import trl.trainer.utils as trl_utils

    projected: list[int] = []
    kernel = trl_utils._ChunkedLogProbFunction

    class Spy:
        @staticmethod
        def apply(hidden, *args):
            projected.append(hidden.shape[0])
            return kernel.apply(hidden, *args)

    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", Spy)
    return projected


def _forward(model, ids, mask, labels):
    model.zero_grad()
    out = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    out.loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return out, grads


def test_only_labelled_positions_are_projected_and_results_are_unchanged(monkeypatch):
    import torch
    from leantrain.llm.lm_head import compaction_supported, labelled_positions_only

    assert compaction_supported()  # a TRL upgrade that drops the hook fails here, loudly
    model, _ = _fused_tiny_model()
    ids, mask, labels = _batch(model.config.vocab_size)
    projected = _count_projected_rows(monkeypatch)
    full, full_grads = _forward(model, ids, mask, labels)
    with labelled_positions_only() as applied:
        compact, compact_grads = _forward(model, ids, mask, labels)
    after, _ = _forward(model, ids, mask, labels)

    labelled = int((labels[:, 1:] != -100).sum())
    assert applied
    # every position (3 rows x 39 next-token labels) without; the labelled ones with
    assert projected == [3 * 39, labelled, 3 * 39]
    assert labelled < 3 * 39 / 3
    assert abs(full.loss.item() - compact.loss.item()) < 1e-6
    for field in ("log_probs", "entropy"):
        assert torch.allclose(getattr(full, field), getattr(compact, field), atol=1e-6)
    assert torch.equal(full.is_top1, compact.is_top1)
    assert full_grads.keys() == compact_grads.keys()
    for name, grad in full_grads.items():
        assert torch.allclose(grad, compact_grads[name], atol=1e-6), name
    assert after.loss.item() == full.loss.item()  # the context restored TRL's choice


def _losses(out_dir):
    log = next(out_dir.glob("sft/logs/*.jsonl"))
    return [json.loads(x)["loss"] for x in log.read_text().splitlines() if '"loss"' in x]


@pytest.mark.slow
def test_sft_trains_with_the_compact_head_and_the_same_losses(sft_rows, tmp_path, monkeypatch):
    """Fixed batches: leantrain's SFT projects only tactic positions, with the step losses of
    the full projection (1e-6) and of plain TRL's first step (1e-4)."""
    import trl
    from leantrain.llm import SFTTrainer, lm_head
    from leantrain.llm.tiny_model import build_tiny_model

    rows = sft_rows.select([0, 1, 2, 0, 1, 2])
    common = {
        "max_steps": 3,
        "per_device_train_batch_size": 2,
        "learning_rate": 1e-3,
        "train_sampling_strategy": "sequential",
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "seed": 0,
    }
    projected = _count_projected_rows(monkeypatch)
    SFTTrainer(
        model_name="tiny", output_dir=tmp_path / "a", evaluate_each_repo=False, **common
    ).train(rows)
    compact, compact_sizes = _losses(tmp_path / "a"), list(projected)
    projected.clear()
    monkeypatch.setattr(lm_head, "compaction_supported", lambda: False)
    SFTTrainer(
        model_name="tiny", output_dir=tmp_path / "b", evaluate_each_repo=False, **common
    ).train(rows)
    full, full_sizes = _losses(tmp_path / "b"), list(projected)

    assert len(compact) == len(full) == 3
    assert compact == pytest.approx(full, abs=1e-6)
    assert compact[-1] < compact[0]  # it trains
    assert len(compact_sizes) == len(full_sizes) == 3  # one projection per step
    assert all(c < f / 3 for c, f in zip(compact_sizes, full_sizes))

    model, tok = build_tiny_model()
    plain = trl.SFTTrainer(
        model=model,
        args=trl.SFTConfig(output_dir=str(tmp_path / "trl"), use_cpu=True, **common),
        train_dataset=rows,
        processing_class=tok,
    )
    plain.train()
    expected = [e["loss"] for e in plain.state.log_history if "loss" in e]
    assert compact[0] == pytest.approx(expected[0], abs=1e-4)
