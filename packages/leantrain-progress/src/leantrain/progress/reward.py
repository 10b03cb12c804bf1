"""The ``progress`` GRPO reward: predicted steps of progress made by a generated tactic.

Registered as entry point ``progress`` in group ``leantrain.rewards`` so that leantrain-llm finds
it by name without depending on this package. A TRL reward function: called as
``reward(prompts=…, completions=…, problem=[…], proof_prefix=[…], reference=[…])``.

For a completion (candidate tactic) ``c`` on state ``s`` after tactics ``p``, the model
predicts ``R(c)`` = steps remaining counting ``c`` itself (1 = ``c`` closes the proof). With
``R0`` the prediction for the reference tactic (the proof's real next step) — or, without a
reference, the mean prediction over the completions of the same state in the batch — the
reward is ``R0 - R(c) + 1``: about 1 step of progress for a tactic as good as the reference,
more for one predicted to shorten the proof, less (or negative) for a detour. Empty
completions and ``sorry``/``admit`` get ``penalty``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leantrain.core.lean_text import contains_sorry

_FENCE_RE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or the last assistant message of a chat completion."""
    if isinstance(completion, str):
        text = completion
    elif isinstance(completion, dict):
        text = str(completion.get("content", ""))
    elif isinstance(completion, Sequence) and completion:
        msgs = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in msgs if m.get("role", "assistant") == "assistant"] or msgs
        text = str(assistant[-1].get("content", "")) if assistant else ""
    else:
        text = ""
    text = text.strip()
    fenced = _FENCE_RE.match(text)
    return fenced.group(1).strip() if fenced else text


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and prompt:
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            return str(users[-1].get("content", ""))
    return ""


class ProgressReward:
    """TRL reward function scoring tactics by the progress model's predicted progress.

    ``model_path``: a trained model directory (default ``$LEANPROGRESS_MODEL``), loaded on
    first use. Options: ``penalty`` (reward of empty / ``sorry`` completions, default -1.0),
    ``clip`` (clip rewards to ``[-clip, clip]``, default None), ``batch_size``,
    ``max_length``, ``device``, or ``predictor`` (an object with ``predict_many``).
    """

    __name__ = "progress"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        penalty: float = -1.0,
        clip: float | None = None,
        batch_size: int = 32,
        max_length: int = 512,
        device: str | None = None,
        predictor: Any = None,
    ) -> None:
        from leantrain.progress.predictor import resolve_model_dir

        self.penalty = float(penalty)
        self.clip = clip
        self._options = {"batch_size": batch_size, "max_length": max_length, "device": device}
        self._predictor = predictor
        # Resolve now so that a missing model fails when the reward is configured, not mid-run.
        self.model_path = None if predictor is not None else resolve_model_dir(model_path)

    @property
    def predictor(self) -> Any:
        if self._predictor is None:
            from leantrain.progress.predictor import ProgressPredictor

            self._predictor = ProgressPredictor.from_pretrained(self.model_path, **self._options)
        return self._predictor

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        problem: Sequence[str] | None = None,
        proof_prefix: Sequence[Any] | None = None,
        reference: Sequence[str | None] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        n = len(completions)
        goals = (
            list(problem)
            if problem is not None
            else [_prompt_text(p) for p in (prompts or [""] * n)]
        )
        prefixes = list(proof_prefix) if proof_prefix is not None else [""] * n
        refs = list(reference) if reference is not None else [None] * n
        tactics = [completion_text(c) for c in completions]
        valid = [i for i, t in enumerate(tactics) if t and not contains_sorry(t)]
        # One batched call over the distinct (state, prefix, tactic) queries: in GRPO the
        # completions of a prompt share their state and reference.
        queries: dict[tuple[str, str, str], int] = {}
        for i in valid:
            queries.setdefault((goals[i], _key(prefixes[i]), tactics[i]), len(queries))
            if refs[i]:
                queries.setdefault((goals[i], _key(prefixes[i]), str(refs[i])), len(queries))
        keys = list(queries)
        preds = (
            self.predictor.predict_many(
                [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]
            )
            if keys
            else []
        )
        pred = {i: preds[queries[(goals[i], _key(prefixes[i]), tactics[i])]] for i in valid}
        ref_pred = {
            i: preds[queries[(goals[i], _key(prefixes[i]), str(refs[i]))]] for i in valid if refs[i]
        }
        # Without a reference, the baseline is the mean over completions of the same state.
        groups: dict[tuple[str, str], list[float]] = defaultdict(list)
        for i in valid:
            groups[(goals[i], _key(prefixes[i]))].append(pred[i])
        rewards = []
        for i in range(n):
            if i not in pred:
                rewards.append(self.penalty)
                continue
            if i in ref_pred:
                baseline = ref_pred[i]
            else:
                g = groups[(goals[i], _key(prefixes[i]))]
                baseline = sum(g) / len(g)
            r = baseline - pred[i] + 1.0
            if self.clip is not None:
                r = max(-self.clip, min(self.clip, r))
            rewards.append(float(r))
        return rewards


def _key(prefix: Any) -> str:
    if prefix is None:
        return ""
    return prefix if isinstance(prefix, str) else "\n".join(map(str, prefix))
