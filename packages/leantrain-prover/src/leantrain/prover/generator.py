"""A tactic generator over a Hugging Face causal LM, asked exactly as it was trained.

The prompt is :func:`leantrain.tactics.build_messages` (system message + proof state) rendered
by the tokenizer's chat template with the assistant turn opened
(``add_generation_prompt=True``), which is how TRL's ``SFTTrainer`` renders the prompt of the
prompt/completion rows leantrain trains on, and how ``leantrain.llm`` evaluates. The model
writes the tactic and its end-of-turn token.

All states of a call are generated in batches (left padding); each returns ``k`` sequences by
beam search (deterministic, ReProver's choice) or by sampling. A candidate's log-probability is
the sum of the log-probabilities of its tokens up to and including the first end-of-sequence
token under the model's raw distribution (log-softmax of the logits, before temperature or any
logits processor), whatever the decoding — so beam and sampled candidates are ranked on the
same scale. The scores are taken while ``generate`` runs, with no second forward pass: a
forward hook keeps the log-softmax of each step's raw logits, and a logits processor (which
sees every running sequence) adds the log-probability of the token each sequence was extended
with, keyed by the sequence's tokens, so beam search's reordering of its beams needs no
bookkeeping. Only the last two steps' distributions are held, not all of them. Duplicates
(after whitespace normalisation) and empty tactics are dropped.

Each candidate has a finish reason (:meth:`HFGenerator.candidates`): ``stop`` when the model
wrote its end-of-turn token, ``length`` when it was cut off at ``max_new_tokens`` (or at the
theorem's deadline). A cut-off tactic is unfinished text and never reaches Lean:
:meth:`HFGenerator.propose` drops it and counts it in ``unfinished``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from leantrain.core.lean_text import normalize_tactic

DECODINGS = ("beam", "sample")
TACTIC_SCORES = ("sum", "mean")


class Candidate(NamedTuple):
    """One generated tactic: its text, the sum of its tokens' log-probabilities (up to and
    including the end-of-turn token), its finish reason (``stop`` or ``length``) and how many
    tokens were scored."""

    tactic: str
    logprob: float
    reason: str
    tokens: int


def distinct(rows: Sequence[Candidate]) -> list[Candidate]:
    """``rows`` of one prompt without empty tactics and duplicates (after whitespace
    normalisation; the most probable copy stays), most probable first."""
    best: dict[str, Candidate] = {}
    for c in rows:
        tactic = c.tactic.strip()
        key = normalize_tactic(tactic)
        if key and (key not in best or c.logprob > best[key].logprob):
            best[key] = c._replace(tactic=tactic)
    return sorted(best.values(), key=lambda c: -c.logprob)


def system_prompt_of(name: str | Path, given: str | None) -> str:
    """``given``, else the system prompt model ``name`` was trained with (its ``prompt.json``),
    else leantrain's default."""
    if given is not None:
        return given
    from leantrain.llm.model_loading import model_files_dir
    from leantrain.tactics import DEFAULT_SYSTEM_PROMPT
    from leantrain.tactics.model_prompt import read_prompt

    recorded = read_prompt(model_files_dir(name))
    return DEFAULT_SYSTEM_PROMPT if recorded is None else recorded.system_prompt


class ChatGenerator:
    """What every engine shares: the training prompt (:meth:`prompt`), candidates without
    duplicates (:meth:`candidates`), cut-off candidates dropped and counted (:meth:`propose`),
    and the tactic score (``tactic_score``: ``sum`` of the token log-probabilities, or their
    ``mean`` per token). An engine implements :meth:`_complete`: ``k`` candidates per prompt.
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        system_prompt: str | None,
        decoding: str = "beam",
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        batch_size: int = 8,
        max_premise_chars: int | None = None,
        tactic_score: str = "sum",
    ) -> None:
        if decoding not in DECODINGS:
            raise ValueError(f"decoding must be one of {DECODINGS}, got {decoding!r}")
        if tactic_score not in TACTIC_SCORES:
            raise ValueError(f"tactic_score must be one of {TACTIC_SCORES}, got {tactic_score!r}")
        self.tokenizer = tokenizer
        self.system_prompt = system_prompt
        self.decoding, self.temperature = decoding, temperature
        self.max_new_tokens, self.batch_size = max_new_tokens, batch_size
        self.tactic_score = tactic_score
        self.unfinished = 0
        """Candidates dropped because generation cut them off (no end-of-turn token)."""
        self.tokens_generated = 0
        """Tokens generated so far (each candidate's up to its end-of-turn token; the budget
        ledger's ``tokens_generated``)."""
        self.last_tokens: list[int] = []
        """Tokens generated for each state of the last call (a shared generation service
        charges each worker its own)."""
        self.deadline: float | None = None
        """``time.monotonic()`` past which generation stops (the prover sets it per theorem from
        its timeout); engines that cannot stop mid-call check it between calls."""
        from leantrain.tactics import DEFAULT_MAX_PREMISE_CHARS

        self.max_premise_chars = max_premise_chars or DEFAULT_MAX_PREMISE_CHARS

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

    def prompt_ids(self, prompt: str) -> list[int]:
        """The token ids of ``prompt`` as training tokenised it (no special tokens added: the
        chat template wrote them)."""
        return list(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])

    def score(self, c: Candidate) -> float:
        """The candidate's tactic score: its log-probability (``sum``) or per token (``mean``)."""
        return c.logprob / max(c.tokens, 1) if self.tactic_score == "mean" else c.logprob

    def propose(
        self,
        states: Sequence[str],
        k: int,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """Up to ``k`` distinct ``(tactic, score)`` per state, best first (the score is the
        tactic score, :meth:`score`); ``premises`` (one list per state) lead the prompts of a
        retrieval-augmented model. Tactics cut off unfinished are dropped (and counted in
        ``unfinished``)."""
        out: list[list[tuple[str, float]]] = []
        for row in self.scored(states, k, premises):
            kept = [(c.tactic, self.score(c)) for c in row if c.reason == "stop"]
            self.unfinished += len(row) - len(kept)
            out.append(sorted(kept, key=lambda tc: -tc[1]))
        return out

    def candidates(
        self,
        states: Sequence[str],
        k: int,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[tuple[str, float, str]]]:
        """Up to ``k`` distinct ``(tactic, log-probability, finish reason)`` per state, most
        probable first; the reason is ``stop`` (the end-of-turn token was written) or
        ``length`` (cut off at ``max_new_tokens`` or the deadline)."""
        return [
            [(c.tactic, c.logprob, c.reason) for c in row]
            for row in self.scored(states, k, premises)
        ]

    def scored(
        self,
        states: Sequence[str],
        k: int,
        premises: Sequence[Sequence[str]] | None = None,
    ) -> list[list[Candidate]]:
        """:meth:`candidates` with each one's token count (:class:`Candidate`)."""
        prompts = [
            self.prompt(s, None if premises is None else premises[i]) for i, s in enumerate(states)
        ]
        rows = self._complete(prompts, k)
        self.last_tokens = [sum(c.tokens for c in row) for row in rows]
        self.tokens_generated += sum(self.last_tokens)
        return [distinct(row) for row in rows]

    def _complete(self, prompts: list[str], k: int) -> list[list[Candidate]]:
        """``k`` candidates (duplicates allowed) per prompt, in order."""
        raise NotImplementedError


class HFGenerator(ChatGenerator):
    """:class:`~leantrain.prover.search.TacticGenerator` over a causal LM and its tokenizer
    (Hugging Face ``generate``).

    ``system_prompt`` is the training one (``None``: no system message), ``decoding`` is
    ``beam`` or ``sample`` (at ``temperature``), ``batch_size`` the most states per
    ``generate`` call, ``max_premise_chars`` the premise budget of a retrieval-augmented prompt
    (the training one). Load one with :meth:`from_pretrained`.
    """

    def __init__(self, model: Any, tokenizer: Any, **options: Any) -> None:
        super().__init__(tokenizer, **options)
        self.model = model
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

        ``system_prompt`` ``None`` takes the one the model was trained with (its
        ``prompt.json``), else leantrain's default.
        """
        import torch
        from leantrain.llm.model_loading import load_model_and_tokenizer

        system_prompt = system_prompt_of(name, system_prompt)
        model, tokenizer = load_model_and_tokenizer(name, trainable_adapter=False)
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        return cls(model.to(device), tokenizer, system_prompt=system_prompt, **options)

    def _complete(self, prompts: list[str], k: int) -> list[list[Candidate]]:
        out: list[list[Candidate]] = []
        side = self.tokenizer.padding_side
        self.tokenizer.padding_side = "left"  # decoder-only generation continues at the right
        try:
            for start in range(0, len(prompts), self.batch_size):
                out += self._propose_batch(prompts[start : start + self.batch_size], k)
        finally:
            self.tokenizer.padding_side = side
        return out

    def _device(self) -> Any:
        return next(self.model.parameters()).device

    def _propose_batch(self, prompts: list[str], k: int) -> list[list[Candidate]]:
        completion, logprobs = self._generate(prompts, k)
        texts = self.tokenizer.batch_decode(completion, skip_special_tokens=True)
        eos = self.tokenizer.eos_token_id
        rows = completion.tolist()
        cands = [
            Candidate(text, lp, "stop", row.index(eos) + 1)
            if eos in row
            else Candidate(text, lp, "length", len(row))
            for text, lp, row in zip(texts, logprobs, rows)
        ]
        return [cands[i * k : (i + 1) * k] for i in range(len(prompts))]

    def _generate(self, prompts: list[str], k: int) -> tuple[Any, list[float]]:
        """``k`` completions per prompt (token ids, ``k`` rows per prompt in order, padded after
        their EOS) and each one's log-probability, recorded while they are generated."""
        import torch
        from transformers import LogitsProcessorList

        enc = self.tokenizer(
            prompts,
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        ).to(self._device())
        prompt_len = enc["input_ids"].shape[1]
        recorder = _RawLogProbs(prompt_len, k, self.tokenizer.eos_token_id)
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "num_return_sequences": k,
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": self.tokenizer.eos_token_id,
            "logits_processor": LogitsProcessorList([recorder]),
        }
        if self.deadline is not None:
            kwargs["max_time"] = max(self.deadline - time.monotonic(), 0.0)
        if self.decoding == "beam":
            kwargs.update(num_beams=k, do_sample=False, early_stopping=True)
        else:
            kwargs.update(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0)
        # generate runs the forward of the transformers model (under a PEFT wrapper: its base)
        base = self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model
        handle = base.register_forward_hook(recorder.hook)
        try:
            with torch.no_grad():
                seqs = self.model.generate(**enc, **kwargs)
        finally:
            handle.remove()
        completion = seqs[:, prompt_len:]
        return completion, recorder.scores(completion)


_Prefix = tuple[int, tuple[int, ...]]
"""A running sequence: its prompt's index in the batch and the tokens generated so far."""


class _RawLogProbs:
    """Each generated sequence's log-probability under the model's raw distribution, recorded
    during ``generate``: :meth:`hook` (a forward hook on the model) keeps the log-softmax of the
    last position's raw logits; ``generate`` then calls this object as its last logits
    processor with the running sequences of that forward, in the same row order.

    A running sequence ``s + [x]`` at one step was extended from ``s`` at the step before, so its
    sum is ``s``'s plus the log-probability of ``x`` in ``s``'s row of the previous step. This
    holds for sampling (rows keep their place) and for beam search (rows are reordered, and
    finished hypotheses leave the running set): sequences are matched by their tokens, not by
    row, so ``beam_indices`` are not needed. A completion that stops at EOS takes the EOS
    log-probability recorded for its prefix at each step; one that ran out of tokens (or time)
    chose its last token at the last step (or, with ``generate``'s deferred stop check, the one
    before), which are the two distributions kept.
    """

    def __init__(self, prompt_len: int, group: int, eos: int) -> None:
        self.prompt_len, self.group, self.eos = prompt_len, group, eos
        self.pending: Any = None
        self.sums: dict[_Prefix, float] = {}
        self.eos_logprob: dict[_Prefix, float] = {}
        self.recent: deque[tuple[dict[_Prefix, int], Any]] = deque(maxlen=2)

    def hook(self, module: Any, args: Any, output: Any) -> None:
        import torch

        self.pending = torch.log_softmax(output.logits[:, -1].float(), dim=-1)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        logp, self.pending = self.pending, None
        if logp is None or logp.shape[0] != input_ids.shape[0]:
            raise RuntimeError("generate ran its logits processors without the hooked forward pass")
        generated = input_ids[:, self.prompt_len :].tolist()
        prefixes = [(j // self.group, tuple(tokens)) for j, tokens in enumerate(generated)]
        if generated[0]:
            rows, previous = self.recent[-1]
            parents = [rows[(item, tokens[:-1])] for item, tokens in prefixes]
            added = previous[parents, input_ids[:, -1]].tolist()
            for (item, tokens), value in zip(prefixes, added):
                self.sums[(item, tokens)] = self.sums[(item, tokens[:-1])] + value
        else:
            self.sums.update(dict.fromkeys(prefixes, 0.0))
        self.eos_logprob.update(zip(prefixes, logp[:, self.eos].tolist()))
        self.recent.append(({p: j for j, p in enumerate(prefixes)}, logp))
        return scores

    def scores(self, completion: Any) -> list[float]:
        """The sums of ``completion``'s rows (``group`` per prompt), each up to and including
        its first EOS."""
        out = []
        for r, tokens in enumerate(completion.tolist()):
            end = tokens.index(self.eos) if self.eos in tokens else len(tokens) - 1
            prefix = (r // self.group, tuple(tokens[:end]))
            if tokens[end] == self.eos:
                last = self.eos_logprob[prefix]
            else:
                rows, logp = next(step for step in reversed(self.recent) if prefix in step[0])
                last = float(logp[rows[prefix], tokens[end]])
            out.append(self.sums[prefix] + last)
        return out
