"""Reading progress data: JSONL rows, a JSON array of rows, or traced theorems directly."""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leantrain.core.errors import DataError
from leantrain.core.schemas import ProgressRow, iter_jsonl, read_json, validate_record
from leantrain.progress.labels import SorryPolicy, make_progress_data
from leantrain.progress.summary import summarize

GOAL_HEAD, PREFIX_HEAD, TACTIC_HEAD = "Goal:\n", "\n\nPrefix:\n", "\n\nCandidate tactic:\n"

log = logging.getLogger("leantrain.progress")


def build_text(goal: str, prefix: str | None, tactic: str, summary: bool = False) -> str:
    """The model input: the seed's text (goal, the tactics so far, the candidate tactic), after
    a summary line of counts when ``summary`` (:func:`~leantrain.progress.summary.summarize`).

    Too long for the model? :func:`fit_texts` shortens it keeping the tactic and conclusion."""
    return _head(goal, prefix, tactic, summary) + _body(goal, prefix, tactic)


def _head(goal: str, prefix: str | None, tactic: str, summary: bool) -> str:
    return summarize(goal, prefix, tactic) + "\n\n" if summary else ""


def _body(goal: str, prefix: str | None, tactic: str) -> str:
    return GOAL_HEAD + goal + PREFIX_HEAD + (prefix or "") + TACTIC_HEAD + tactic


def split_goal(goal: str) -> tuple[str, str, str]:
    """``(hypotheses, conclusion, rest)`` of a proof state: the conclusion runs from the first
    ``⊢`` to the end of that goal (a blank line, where the next goal of the state starts);
    ``rest`` is the other goals. A state without ``⊢`` is all conclusion."""
    at = goal.find("⊢")
    if at < 0:
        return "", goal, ""
    end = goal.find("\n\n", at)
    end = len(goal) if end < 0 else end
    return goal[:at], goal[at:end], goal[end:]


class _Tokens:
    """Token counts and token-boundary cuts of text pieces: the ``tokenizers`` backend of a fast
    tokenizer (one batched call with offsets, no truncation), else the tokenizer itself."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.backend: Any = None
        if getattr(tokenizer, "is_fast", False) and hasattr(tokenizer, "backend_tokenizer"):
            from tokenizers import Tokenizer

            self.backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
            self.backend.no_truncation()
            self.backend.no_padding()
        self.specials = tokenizer.num_special_tokens_to_add(pair=False)

    def count(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text, special tokens included."""
        if self.backend is not None:
            return [len(e.ids) for e in self.backend.encode_batch(list(texts))]
        ids = self.tokenizer(list(texts), add_special_tokens=True, verbose=False)["input_ids"]
        return [len(x) for x in ids]

    def pieces(self, texts: Sequence[str]) -> list[_Piece]:
        if self.backend is not None:
            encs = self.backend.encode_batch(list(texts), add_special_tokens=False)
            return [_Piece(t, len(e.offsets), e.offsets, None) for t, e in zip(texts, encs)]
        ids = self.tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
        return [_Piece(t, len(x), None, self.tokenizer) for t, x in zip(texts, ids)]


@dataclasses.dataclass
class _Piece:
    text: str
    n: int  # its tokens
    offsets: Any  # a fast tokenizer's character offsets of its tokens
    tokenizer: Any  # else: the tokenizer, to search for a cut

    def keep(self, n: int, *, from_end: bool) -> tuple[str, int]:
        """Its end (``from_end``) or start of at most about ``n`` tokens, and their count."""
        if n <= 0 or not self.text:
            return "", 0
        if self.n <= n:
            return self.text, self.n
        text = self.text
        if self.offsets is not None:
            return (text[self.offsets[-n][0] :] if from_end else text[: self.offsets[n - 1][1]]), n
        lo, hi = 0, len(text)  # the most characters whose tokens fit
        while lo < hi:
            mid = (lo + hi + 1) // 2
            part = text[len(text) - mid :] if from_end else text[:mid]
            fits = len(self.tokenizer(part, add_special_tokens=False, verbose=False)["input_ids"])
            lo, hi = (mid, hi) if fits <= n else (lo, mid - 1)
        return (text[len(text) - lo :] if from_end else text[:lo]), n


def fit_text(
    tokenizer: Any,
    goal: str,
    prefix: str | None,
    tactic: str,
    max_length: int,
    summary: bool = False,
) -> str:
    """:func:`build_text`, shortened to ``max_length`` tokens of ``tokenizer`` (special tokens
    included) so that the candidate tactic and the goal's conclusion survive (and the summary
    line, of the whole row, when ``summary``).

    A text that fits is returned unchanged. Otherwise the token budget goes, in order, to the
    candidate tactic (its start, up to half the budget), the conclusion (``⊢ …``, its start),
    then the hypotheses nearest the conclusion and the latest tactics of the prefix (at least a
    quarter of what is left for the prefix when it needs it), then the other goals of the state.
    """
    return fit_texts(tokenizer, [goal], [prefix], [tactic], max_length, summary)[0]


def _assemble(pieces: Sequence[_Piece], budget: int, shrink: int) -> str:
    """The row's text in ``budget`` tokens: its summary line (whole; empty without one), the
    tactic (up to half of the rest), the conclusion, then the rest; ``shrink`` more tokens are
    taken from the rest first, then the conclusion, the tactic."""
    tac, concl, hyp, pre, other, head = pieces
    budget = max(budget - head.n, 1)
    n_tac = min(tac.n, max(budget // 2, min(budget, 8)))
    n_concl = min(concl.n, budget - n_tac)
    left = budget - n_tac - n_concl - shrink
    if left < 0:
        n_concl, left = n_concl + left, 0
        if n_concl < 0:
            n_tac, n_concl = max(n_tac + n_concl, 1), 0
    tac_text, _ = tac.keep(n_tac, from_end=False)
    concl_text, _ = concl.keep(n_concl, from_end=False)
    hyp_text, n = hyp.keep(min(hyp.n, left - min(pre.n, left // 4)), from_end=True)
    left -= n
    pre_text, n = pre.keep(left, from_end=True)
    left -= n
    other_text, _ = other.keep(left, from_end=False)
    return head.text + _body(hyp_text + concl_text + other_text, pre_text, tac_text)


def fit_texts(
    tokenizer: Any,
    goals: Sequence[str],
    prefixes: Sequence[str | None],
    tactics: Sequence[str],
    max_length: int,
    summary: bool = False,
) -> list[str]:
    """:func:`fit_text` of each row, in a few batched tokenisations."""
    heads = [_head(g, p, t, summary) for g, p, t in zip(goals, prefixes, tactics)]
    texts = [h + _body(g, p, t) for h, g, p, t in zip(heads, goals, prefixes, tactics)]
    if not texts:
        return texts
    tokens = _Tokens(tokenizer)
    long = [i for i, n in enumerate(tokens.count(texts)) if n > max_length]
    if not long:
        return texts
    parts = []
    for i in long:
        hyps, conclusion, rest = split_goal(goals[i])
        parts += [tactics[i], conclusion, hyps, prefixes[i] or "", rest, heads[i]]
    parts.append(GOAL_HEAD + PREFIX_HEAD + TACTIC_HEAD)
    pieces = tokens.pieces(parts)
    budget = max_length - tokens.specials - pieces[-1].n
    shrink = dict.fromkeys(long, 0)
    where = {i: k for k, i in enumerate(long)}
    for _ in range(6):  # pieces tokenised apart may take a few more tokens together
        for i in long:
            k = 6 * where[i]
            texts[i] = _assemble(pieces[k : k + 6], budget, shrink[i])
        counts = tokens.count([texts[i] for i in long])
        over = [(i, n - max_length) for i, n in zip(long, counts) if n > max_length]
        for i, extra in over:
            shrink[i] += extra
        long = [i for i, _ in over]
        if not long:
            break
    return texts


UNKNOWN_WARN_FRACTION = 0.01
"""A tokenizer mapping more than this fraction of tokens to its unknown token is warned about."""
_warned: set[str] = set()


def warn_unknown_tokens(tokenizer: Any, input_ids: Sequence[Sequence[int]]) -> float:
    """The fraction of ``input_ids`` that are the tokenizer's unknown token; above
    :data:`UNKNOWN_WARN_FRACTION` a warning (once per tokenizer) on the ``leantrain.progress``
    logger: the model cannot see those symbols (e.g. ⊢, ℝ with a BERT-uncased vocabulary)."""
    unk = getattr(tokenizer, "unk_token_id", None)
    total = sum(len(ids) for ids in input_ids)
    if unk is None or not total:
        return 0.0
    fraction = sum(sum(1 for i in ids if i == unk) for ids in input_ids) / total
    name = str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__)
    if fraction > UNKNOWN_WARN_FRACTION and name not in _warned:
        _warned.add(name)
        log.warning(
            "progress: tokenizer %s maps %.1f%% of the input tokens to %s; the model cannot see "
            "those symbols (a pretrained vocabulary without Lean's Unicode, or text unlike the "
            "data a 'tiny' vocabulary was learnt from)",
            name,
            100 * fraction,
            getattr(tokenizer, "unk_token", "unknown"),
        )
    return fraction


def _check_rows(path: Path, objs: Sequence[tuple[int, Any]]) -> list[dict[str, Any]]:
    rows = []
    for index, obj in objs:
        row = validate_record(ProgressRow, obj, path=path, index=index)
        rows.append(
            {
                "goal": row.goal.strip(),
                "prefix": (row.prefix or "").strip(),
                "tactic": row.tactic.strip(),
                "steps_remaining": row.steps_remaining,
                **({"theorem": str(obj["theorem"])} if obj.get("theorem") is not None else {}),
            }
        )
    return rows


def load_progress_data(
    path: str | Path,
    *,
    splits: Sequence[str] = ("train",),
    strategy: str = "random",
    sorry_policy: SorryPolicy = "drop_theorem",
) -> list[dict[str, Any]]:
    """Progress rows from ``path``, validated.

    * ``.jsonl``: one progress row per line (what ``leantrain progress make-data`` writes);
    * ``.json``: an array of progress rows, or an array of traced theorems (labelled here);
    * a directory: an export / split directory of traced theorems (see ``make_progress_data``).

    Bad rows (missing fields, negative or non-integer ``steps_remaining``) and inputs with no
    rows raise :class:`~leantrain.core.errors.DataError` naming the file, record and field.
    """
    path = Path(path)
    if path.is_dir():
        return make_progress_data(path, splits=splits, strategy=strategy, sorry_policy=sorry_policy)
    if not path.is_file():
        raise DataError(
            path,
            "file not found",
            hint="give a progress .jsonl, a traced split .json or an export directory",
        )
    if path.suffix == ".jsonl":
        rows = _check_rows(path, list(iter_jsonl(path)))
    else:
        data = read_json(path)
        if not isinstance(data, list):
            raise DataError(
                path,
                f"expected a JSON array, got {type(data).__name__}",
                hint="give progress rows or traced theorems",
            )
        if data and isinstance(data[0], dict) and "traced_tactics" in data[0]:
            return make_progress_data(path, sorry_policy=sorry_policy)
        rows = _check_rows(path, list(enumerate(data)))
    if not rows:
        raise DataError(
            path,
            "no progress rows (the file is empty)",
            hint="make rows with 'leantrain progress make-data'",
        )
    return rows


class ProgressDataset:
    """Progress rows for regression training; ``to_hf()`` gives a ``datasets.Dataset``.

    ``data_path`` is anything :func:`load_progress_data` reads; ``rows`` may be given instead.
    """

    def __init__(
        self,
        data_path: str | Path | None = None,
        *,
        rows: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        if (data_path is None) == (rows is None):
            raise ValueError("give exactly one of data_path and rows")
        self.data_path = data_path
        self.data = list(rows) if rows is not None else load_progress_data(data_path, **options)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.data[i]

    def texts(self, summary: bool = False) -> list[str]:
        """The model input text of every row (with the summary line when ``summary``)."""
        return [build_text(r["goal"], r.get("prefix", ""), r["tactic"], summary) for r in self.data]

    def split(self, eval_ratio: float, seed: int = 42) -> tuple[ProgressDataset, ProgressDataset]:
        """Train/eval split that keeps all rows of one proof (same ``theorem``) on one side.

        Rows without a ``theorem`` key are split individually (like the seed). With
        ``eval_ratio`` 0 the eval side is empty.
        """
        if not 0 <= eval_ratio < 1:
            raise ValueError("eval_ratio must be in [0, 1)")
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(self.data):
            groups.setdefault(r.get("theorem") or f"#row{i}", []).append(i)
        keys = sorted(groups)
        random.Random(seed).shuffle(keys)
        n_eval_rows = round(eval_ratio * len(self.data))
        eval_idx: list[int] = []
        for k in keys:
            if len(eval_idx) >= n_eval_rows:
                break
            eval_idx.extend(groups[k])
        if eval_ratio > 0 and len(eval_idx) >= len(self.data) and len(keys) > 1:
            eval_idx = groups[keys[0]]  # never leave the training side empty
        chosen = set(eval_idx)
        train = [r for i, r in enumerate(self.data) if i not in chosen]
        evals = [self.data[i] for i in sorted(chosen)]
        return ProgressDataset(rows=train), ProgressDataset(rows=evals)

    def to_hf(self) -> Any:
        """A ``datasets.Dataset`` with columns goal, prefix, tactic, steps_remaining."""
        from datasets import Dataset

        cols = ("goal", "prefix", "tactic", "steps_remaining")
        return Dataset.from_dict({c: [r.get(c, "") for r in self.data] for c in cols})
