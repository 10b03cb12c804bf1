"""Turn theorems into tactic examples, with the filters of :class:`TacticDatasetConfig` and a
count of what each filter removed (so an empty result can say why)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from leantrain.core.errors import DataError
from leantrain.core.lean_text import contains_sorry, first_line, strip_marks
from leantrain.core.schemas import Theorem
from leantrain.tactics.dataset_config import TacticDatasetConfig
from leantrain.tactics.prompts import format_user_prompt


@dataclass(frozen=True)
class TacticExample:
    """One (state, tactic) pair with the identity of its theorem and the proof before it."""

    state: str
    """The proof state before the tactic, marks removed."""
    tactic: str
    """The tactic as trained on (first line only when the config asks)."""
    theorem: Theorem
    tactic_index: int
    proof_prefix: tuple[str, ...]
    """The theorem's earlier tactics, verbatim, in proof order (to replay the proof in Lean)."""
    premises: tuple[str, ...]
    """Full names of the premises annotated in this tactic."""
    prompt_premises: tuple[str, ...] = ()
    """Retrieved premises (serialised, best first) that lead the prompt; empty without a
    retriever (see :mod:`leantrain.tactics.premises`)."""


@dataclass
class FilterStats:
    """How many theorems / tactics were read, and what each filter removed."""

    theorems: int = 0
    tactics: int = 0
    kept: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    stopped_at_max_samples: bool = False

    def remove(self, reason: str) -> None:
        self.removed[reason] = self.removed.get(reason, 0) + 1

    def summary(self) -> str:
        """One line: ``read 3 theorems / 9 tactics; removed: 2 sorry/admit, 1 empty; kept 6``."""
        removed = ", ".join(f"{n} {reason}" for reason, n in self.removed.items() if n) or "nothing"
        return f"read {self.theorems} theorems / {self.tactics} tactics; removed: {removed}; kept {self.kept}"


def iter_examples(
    theorems: Iterator[Theorem],
    config: TacticDatasetConfig,
    stats: FilterStats,
    max_samples: int | None,
) -> Iterator[TacticExample]:
    """Yield the examples that pass the config's filters, counting removals in ``stats``."""
    seen: set[tuple[str, str]] = set()
    for theorem in theorems:
        stats.theorems += 1
        previous: list[str] = []
        for i, traced in enumerate(theorem.traced_tactics):
            stats.tactics += 1
            raw = traced.tactic
            prefix = tuple(previous)
            previous.append(raw)
            tactic = first_line(raw) if config.first_line_only else strip_marks(raw).strip()
            state = format_user_prompt(traced.state_before)
            if not tactic:
                stats.remove("empty tactic")
                continue
            if config.skip_sorry and contains_sorry(tactic):
                stats.remove("sorry/admit")
                continue
            if not state:
                stats.remove("empty state")
                continue
            if config.max_state_chars is not None and len(state) > config.max_state_chars:
                stats.remove(f"state over max_state_chars={config.max_state_chars}")
                continue
            if config.dedup:
                key = (state, tactic)
                if key in seen:
                    stats.remove("duplicate")
                    continue
                seen.add(key)
            stats.kept += 1
            yield TacticExample(
                state=state,
                tactic=tactic,
                theorem=theorem,
                tactic_index=i,
                proof_prefix=prefix,
                premises=tuple(dict.fromkeys(p.full_name for p in traced.premises)),
            )
            if max_samples is not None and stats.kept >= max_samples:
                stats.stopped_at_max_samples = True
                return


def empty_dataset_error(where: str, stats: FilterStats) -> DataError:
    """The error for a dataset that ended up with no example, saying which filters removed what."""
    if stats.tactics == 0:
        msg = f"no traced tactics ({stats.theorems} theorems read)"
        hint = "the split holds no theorem with traced_tactics; check the path and the split"
    else:
        msg = f"every example was filtered out ({stats.summary()})"
        hint = "relax the filters (skip_sorry, max_state_chars, dedup) or use another split"
    return DataError(where, msg, hint=hint)
