"""``ProgressPredictor``: steps-remaining predictions from a trained progress model."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leantrain.core.errors import CheckpointError, ConfigError
from leantrain.core.lifelong import check_model_dir, check_model_name, find_model, loading
from leantrain.progress.dataset import fit_texts, warn_unknown_tokens
from leantrain.progress.metrics import regression_metrics
from leantrain.progress.summary import input_format_of
from leantrain.progress.target import TargetTransform
from leantrain.progress.tiny_model import TINY_NAME

MODEL_ENV = "LEANPROGRESS_MODEL"
"""Environment variable naming the trained model directory (the seed's convention)."""

_TRAINED = "train one with 'leantrain progress train' and pass its --output-dir"


def resolve_model_dir(path: str | Path | None) -> Path:
    """The model directory: ``path``, else ``$LEANPROGRESS_MODEL``; a leantrain run directory
    stands for its newest progress model. Its files are checked (core's model guard)."""
    if path is None:
        env = os.environ.get(MODEL_ENV)
        if not env:
            raise ConfigError(
                "no progress model given",
                hint=f"pass a trained model directory or set {MODEL_ENV}=DIR",
            )
        path = env
    path = find_model(path, ("progress",)) or Path(path)
    if not path.is_dir():
        raise CheckpointError(
            f"{path}: not a trained progress model (no such model directory)", hint=_TRAINED
        )
    return check_model_dir(path, "a trained progress model", _TRAINED)


def check_base_model(name: str) -> None:
    """The base model of ``progress train``: ``tiny``, a hub id, or a local directory, which
    must exist and hold a loadable model (core's model guard)."""
    hint = "pass 'tiny', a model directory or a hub id"
    check_model_name(name, (TINY_NAME,), trainers=(), what="a model directory", hint=hint)


def load_pretrained(loader: Any, path: str | Path, **kw: Any) -> Any:
    """``loader.from_pretrained(path, **kw)`` without remote code; transformers' errors for
    files it cannot read (a hub id offline, a bad file) are one :class:`CheckpointError` line."""
    with loading(path):
        return loader.from_pretrained(str(path), trust_remote_code=False, **kw)


class ProgressPredictor:
    """Predicts the number of proof steps remaining after a candidate tactic.

    Build it with :meth:`from_pretrained` (a model or run directory written by
    ``ProgressTrainer``, or the one named by ``LEANPROGRESS_MODEL``), or directly from a model and tokenizer in memory.
    Model outputs are mapped back to steps by the target transform saved in the model's config
    (:mod:`leantrain.progress.target`; a model without one predicts raw steps). Inputs longer
    than ``max_length`` tokens are shortened keeping the candidate tactic and the conclusion.
    """

    def __init__(
        self, model: Any, tokenizer: Any, *, max_length: int = 512, batch_size: int = 32
    ) -> None:
        if batch_size < 1:  # range(0, n, 0) fails; a negative step predicts nothing
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.batch_size = batch_size
        self.target = TargetTransform.from_model(model) or TargetTransform()
        self.summary = input_format_of(model, "plain") == "summary"
        self.model.eval()

    @classmethod
    def from_pretrained(
        cls, path: str | Path | None = None, *, device: str | None = None, **options: Any
    ) -> ProgressPredictor:
        """Load a trained model directory (``None``: ``$LEANPROGRESS_MODEL``)."""
        model_dir = resolve_model_dir(path)  # before torch and transformers load
        import leantrain.progress.mean_pool  # noqa: F401  (registers the tiny model's type)
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tokenizer = load_pretrained(AutoTokenizer, model_dir)
        model = load_pretrained(AutoModelForSequenceClassification, model_dir)
        if model.config.num_labels != 1:
            raise CheckpointError(
                f"{model_dir}: expected a regression model with 1 output, found {model.config.num_labels}"
            )
        if device:
            model.to(device)
        options.setdefault(
            "max_length", min(getattr(tokenizer, "model_max_length", 512) or 512, 512)
        )
        return cls(model, tokenizer, **options)

    def predict_many(
        self,
        goals: Sequence[str],
        prefixes: Sequence[str | Sequence[str] | None],
        tactics: Sequence[str],
    ) -> list[float]:
        """Predicted steps remaining for each ``(goal, prefix, tactic)``; batched, sorted by length.

        A prefix may be a newline-joined string or a list of earlier tactics.
        """
        import torch

        if not (len(goals) == len(prefixes) == len(tactics)):
            raise ValueError("goals, prefixes and tactics must have the same length")
        texts = fit_texts(
            self.tokenizer,
            goals,
            [_join(p) for p in prefixes],
            tactics,
            self.max_length,
            summary=self.summary,
        )
        # Sorting by length keeps padding (and so wasted compute) small in each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = [0.0] * len(texts)
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                enc = self.tokenizer(
                    [texts[i] for i in idx],
                    truncation=True,
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                )
                enc = {
                    k: v.to(device)
                    for k, v in enc.items()
                    if k in ("input_ids", "attention_mask", "token_type_ids")
                }
                ids, mask = enc["input_ids"].tolist(), enc["attention_mask"].tolist()
                warn_unknown_tokens(
                    self.tokenizer, [[i for i, m in zip(r, k) if m] for r, k in zip(ids, mask)]
                )
                logits = self.model(**enc).logits.reshape(-1).float().cpu().numpy()
                for i, v in zip(idx, self.target.inverse(logits)):
                    out[i] = float(v)
        return out

    def predict(
        self, goal: str, prefix: str | Sequence[str] | None = "", tactic: str = ""
    ) -> float:
        """Predicted steps remaining for one candidate tactic."""
        return self.predict_many([goal], [prefix], [tactic])[0]

    def rank(
        self, goal: str, prefix: str | Sequence[str] | None, candidates: Sequence[str]
    ) -> list[tuple[str, float]]:
        """Candidates with their predictions, fewest predicted steps first (for best-first search)."""
        scores = self.predict_many(
            [goal] * len(candidates), [prefix] * len(candidates), list(candidates)
        )
        return sorted(zip(candidates, scores), key=lambda cs: cs[1])

    def evaluate(self, rows: Sequence[dict[str, Any]]) -> dict[str, float]:
        """Metrics (MSE, MAE, within ±1, MAE per bin) of the predictions on progress rows."""
        preds = self.predict_many(
            [r["goal"] for r in rows],
            [r.get("prefix", "") for r in rows],
            [r["tactic"] for r in rows],
        )
        return regression_metrics(preds, [r["steps_remaining"] for r in rows])


def _join(prefix: str | Sequence[str] | None) -> str:
    if prefix is None:
        return ""
    if isinstance(prefix, str):
        return prefix
    return "\n".join(str(t).strip() for t in prefix)
