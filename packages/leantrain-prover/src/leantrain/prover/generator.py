"""A tactic generator over a Hugging Face causal LM, asked exactly as it was trained.

The prompt is :func:`leantrain.tactics.build_messages` (system message + proof state) rendered
by the tokenizer's chat template with the assistant turn opened
(``add_generation_prompt=True``), which is how TRL's ``SFTTrainer`` renders the prompt of the
prompt/completion rows leantrain trains on, and how ``leantrain.llm`` evaluates. The model
writes the tactic and its end-of-turn token.

All states of a call are generated in batches (left padding); each returns ``k`` sequences by
beam search (deterministic, ReProver's choice) or by sampling. Every candidate is then scored
by one forward pass: its log-probability is the sum of the log-probabilities of its tokens up to
and including the end-of-sequence token under the model, whatever the decoding — so beam and
sampled candidates are ranked on the same scale. Duplicates (after whitespace normalisation)
and empty tactics are dropped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leantrain.core.lean_text import normalize_tactic
from leantrain.tactics.trained_prompt import recorded_training_config

DECODINGS = ("beam", "sample")


def recorded_system_prompt(model_path: str | Path) -> tuple[bool, str | None]:
    """The system prompt of :func:`recorded_training_config`: ``(found, prompt)``, ``(False,
    None)`` without a run."""
    config = recorded_training_config(model_path)
    return (False, None) if config is None else (True, config["system_prompt"])


class HFGenerator:
    """:class:`~leantrain.prover.search.TacticGenerator` over a causal LM and its tokenizer.

    ``system_prompt`` is the training one (``None``: no system message), ``decoding`` is
    ``beam`` or ``sample`` (at ``temperature``), ``batch_size`` the most states per
    ``generate`` call, ``max_premise_chars`` the premise budget of a retrieval-augmented prompt
    (the training one). Load one with :meth:`from_pretrained`.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        system_prompt: str | None,
        decoding: str = "beam",
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        batch_size: int = 8,
        max_premise_chars: int | None = None,
    ) -> None:
        if decoding not in DECODINGS:
            raise ValueError(f"decoding must be one of {DECODINGS}, got {decoding!r}")
        self.model, self.tokenizer = model, tokenizer
        self.system_prompt = system_prompt
        self.decoding, self.temperature = decoding, temperature
        self.max_new_tokens, self.batch_size = max_new_tokens, batch_size
        self.deadline: float | None = None
        """``time.monotonic()`` past which generation stops (the prover sets it per theorem from
        its timeout): each ``generate`` call gets what is left as ``max_time``, so a slow
        expansion cannot run past the theorem's timeout."""
        from leantrain.tactics import DEFAULT_MAX_PREMISE_CHARS

        self.max_premise_chars = max_premise_chars or DEFAULT_MAX_PREMISE_CHARS
        self.model.eval()

    @classmethod
    def from_pretrained(
        cls,
        name: str | Path,
        *,
        system_prompt: str | None = None,
        device: str | None = None,
        **options: Any,
    ) -> HFGenerator:
        """Load ``name`` (``tiny``, a model / adapter / leantrain run directory, a GGUF file or a
        hub id) with :func:`leantrain.llm.model_loading.load_model_and_tokenizer`, once.

        ``system_prompt`` ``None`` takes the one the run was trained with (from its manifest),
        else leantrain's default.
        """
        import torch
        from leantrain.llm.model_loading import load_model_and_tokenizer
        from leantrain.tactics import DEFAULT_SYSTEM_PROMPT

        if system_prompt is None:
            found, recorded = recorded_system_prompt(name)
            system_prompt = recorded if found and recorded is not None else DEFAULT_SYSTEM_PROMPT
        model, tokenizer = load_model_and_tokenizer(name, trainable_adapter=False)
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        return cls(model.to(device), tokenizer, system_prompt=system_prompt, **options)

    def prompt(self, state: str, premises: Sequence[str] | None = None) -> str:
        """The text the model is given for ``state`` (led by ``premises`` when given): the
        training prompt, assistant turn open."""
        from leantrain.tactics import build_messages

        return str(
            self.tokenizer.apply_chat_template(
                build_messages(
                    state, self.system_prompt, premises, max_premise_chars=self.max_premise_chars
                ),
                tokenize=False,
                add_generation_prompt=True,
            )
        )

    def propose(
        self,
        states: Sequence[str],
        k: int,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """Up to ``k`` distinct ``(tactic, log-probability)`` per state, most probable first;
        ``premises`` (one list per state) lead the prompts of a retrieval-augmented model."""
        out: list[list[tuple[str, float]]] = []
        side = self.tokenizer.padding_side
        self.tokenizer.padding_side = "left"  # decoder-only generation continues at the right
        prompts = [
            self.prompt(s, None if premises is None else premises[i]) for i, s in enumerate(states)
        ]
        try:
            for start in range(0, len(states), self.batch_size):
                out += self._propose_batch(prompts[start : start + self.batch_size], k)
        finally:
            self.tokenizer.padding_side = side
        return out

    def _device(self) -> Any:
        return next(self.model.parameters()).device

    def _propose_batch(self, prompts: list[str], k: int) -> list[list[tuple[str, float]]]:
        import torch

        enc = self.tokenizer(
            prompts,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        ).to(self._device())
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "num_return_sequences": k,
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": self.tokenizer.eos_token_id,
        }
        if self.deadline is not None:
            kwargs["max_time"] = max(self.deadline - time.monotonic(), 0.0)
        if self.decoding == "beam":
            kwargs.update(num_beams=k, do_sample=False, early_stopping=True)
        else:
            kwargs.update(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0)
        with torch.no_grad():
            seqs = self.model.generate(**enc, **kwargs)
        prompt_len = enc["input_ids"].shape[1]
        prompt_mask = enc["attention_mask"].repeat_interleave(k, dim=0)
        completion = seqs[:, prompt_len:]
        logprobs = self._score(seqs, prompt_mask, completion)
        texts = self.tokenizer.batch_decode(completion, skip_special_tokens=True)
        out = []
        for i in range(len(prompts)):
            best: dict[str, tuple[str, float]] = {}
            for j in range(i * k, (i + 1) * k):
                tactic = texts[j].strip()
                key = normalize_tactic(tactic)
                if key and (key not in best or logprobs[j] > best[key][1]):
                    best[key] = (tactic, logprobs[j])
            out.append(sorted(best.values(), key=lambda tl: -tl[1]))
        return out

    def _score(self, seqs: Any, prompt_mask: Any, completion: Any) -> list[float]:
        """Sum of the completion tokens' log-probabilities, up to and including the first EOS."""
        import torch

        eos = self.tokenizer.eos_token_id
        is_eos = completion == eos
        # tokens after the first EOS are padding: cumulative count of EOS before each position
        before = torch.cumsum(is_eos.int(), dim=1) - is_eos.int()
        keep = before == 0
        mask = torch.cat([prompt_mask, keep.to(prompt_mask.dtype)], dim=1)
        positions = (torch.cumsum(mask, dim=1) - 1).clamp(min=0)
        with torch.no_grad():
            logits = self.model(input_ids=seqs, attention_mask=mask, position_ids=positions).logits
        start = prompt_mask.shape[1]
        logp = torch.log_softmax(logits[:, start - 1 : -1].float(), dim=-1)
        token_logp = logp.gather(-1, completion.unsqueeze(-1)).squeeze(-1)
        return (token_logp * keep).sum(dim=1).tolist()
