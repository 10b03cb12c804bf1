"""The premise corpus: ``corpus.jsonl`` (files, imports, premises) with fast lookups.

Accessibility follows ReProver (:mod:`leantrain.retrieval.accessible`): from position ``pos``
of file ``F``, the premises of every file ``F`` imports transitively, plus those of ``F`` that
end before ``pos``. That needs ``F``'s imports. A file whose imports are *unknown* — a
``corpus.jsonl`` line with ``"imports_known": false``, as leantrain's export writes for a
corpus built from premise annotations, or every file of a corpus built here from annotations
— is taken to import every other file of the corpus: its accessible premises are all
premises outside it plus its own that end before ``pos``. That over-approximates (a retriever
sees candidates the file could not import, which only makes retrieval harder) and never
hides a true positive (a Lean file cannot use a later declaration of its own). A file that
imports, directly or transitively, a file with unknown imports is treated the same way,
since what that file imports is unknown too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from leantrain.core.errors import DataError
from leantrain.core.schemas import CorpusFile, Theorem, load_corpus, load_theorems
from leantrain.retrieval.accessible import ImportGraph

log = logging.getLogger("leantrain.retrieval")

Pos = tuple[int, int]


@dataclass(frozen=True)
class PremiseEntry:
    """One premise of the corpus, with the file that defines it."""

    full_name: str
    path: str
    code: str
    start: Pos
    end: Pos
    kind: str = "theorem"

    def serialize(self) -> str:
        """The text the encoder sees: the code, led by the name when the code lacks it."""
        code = self.code.strip()
        if not code:
            return self.full_name
        last = self.full_name.rsplit(".", 1)[-1]
        return code if last in code else f"{self.full_name} : {code}"


class Corpus:
    """Premises by index, files and their import DAG, accessible-premise queries."""

    def __init__(
        self,
        files: Sequence[CorpusFile],
        *,
        source: str | Path | None = None,
        imports_known: bool = True,
    ) -> None:
        self.source = source
        self.premises: list[PremiseEntry] = []
        self.file_premises: dict[str, list[int]] = {}
        for f in files:
            ids = self.file_premises.setdefault(f.path, [])
            for p in f.premises:
                ids.append(len(self.premises))
                self.premises.append(
                    PremiseEntry(p.full_name, f.path, p.code, tuple(p.start), tuple(p.end), p.kind)  # type: ignore[arg-type]
                )
        if not self.premises:
            raise DataError(
                source,
                "the corpus has no premises",
                hint="export a repository with traced premises",
            )
        self.unknown_imports: set[str] = {
            f.path
            for f in files
            if not imports_known or (f.model_extra or {}).get("imports_known", True) is False
        }
        """Files whose imports are unknown (see the module docstring)."""
        self.graph = ImportGraph(
            {f.path: [] if f.path in self.unknown_imports else f.imports for f in files},
            source=source,
        )
        self._open_files: dict[str, bool] = {}
        self._by_path_name = {(p.path, p.full_name): i for i, p in enumerate(self.premises)}
        self._by_name: dict[str, int] = {}
        for i, p in enumerate(self.premises):
            self._by_name.setdefault(p.full_name, i)
        self._import_ids: dict[str, np.ndarray] = {}
        self._warned: set[str] = set()

    def __len__(self) -> int:
        return len(self.premises)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_jsonl(cls, path: str | Path) -> Corpus:
        """Load ``corpus.jsonl``; errors name the file and line."""
        path = Path(path)
        return cls(load_corpus(path), source=path)

    @classmethod
    def from_annotations(
        cls, theorems: Iterable[Theorem], *, source: str | Path | None = None
    ) -> Corpus:
        """A corpus of the annotated premises alone (code = name, imports unknown)."""
        seen: dict[tuple[str, str], dict] = {}
        for thm in theorems:
            for tac in thm.traced_tactics:
                for prov in tac.premises:
                    seen.setdefault(
                        (prov.def_path, prov.full_name),
                        {
                            "full_name": prov.full_name,
                            "code": prov.full_name,
                            "start": list(prov.def_pos),
                            "end": list(prov.def_end_pos),
                            "kind": "theorem",
                        },
                    )
        by_file: dict[str, list[dict]] = {}
        for (path, _), prem in sorted(
            seen.items(), key=lambda kv: (kv[0][0], tuple(kv[1]["start"]))
        ):
            by_file.setdefault(path, []).append(prem)
        files = [CorpusFile(path=p, imports=[], premises=prems) for p, prems in by_file.items()]
        if not files:
            raise DataError(
                source,
                "the corpus is empty: no corpus.jsonl and no premise annotations to build one from",
                hint="retrieval needs annotated_tactic premises or a corpus.jsonl",
            )
        return cls(files, source=source, imports_known=False)

    @classmethod
    def from_export(cls, data_dir: str | Path) -> Corpus:
        """The corpus of an export directory: its ``corpus.jsonl``, else built from annotations."""
        data_dir = Path(data_dir)
        if not data_dir.is_dir():
            raise DataError(
                data_dir,
                "export directory not found",
                hint="give the output of 'leantrain export merge' (random/, novel_premises/, corpus.jsonl)",
            )
        if (data_dir / "corpus.jsonl").is_file():
            return cls.from_jsonl(data_dir / "corpus.jsonl")
        theorems: list[Theorem] = []
        for split_file in sorted(data_dir.glob("*/*.json")) + sorted(data_dir.glob("*.json")):
            if split_file.name == "metadata.json":
                continue
            theorems.extend(load_theorems(split_file))
        if not theorems:
            raise DataError(
                data_dir,
                "no corpus.jsonl and no split files (random/train.json …)",
                hint="give the output of 'leantrain export merge'",
            )
        log.info(
            "%s has no corpus.jsonl: building the corpus from %d theorems' premise annotations "
            "(code = premise name; imports unknown, so every premise outside a file counts as "
            "accessible from it)",
            data_dir,
            len(theorems),
        )
        return cls.from_annotations(theorems, source=data_dir)

    # -- lookups ------------------------------------------------------------------------------
    def find(self, full_name: str, def_path: str | None = None) -> int | None:
        """Index of a premise by ``(def_path, full_name)``, falling back to the name alone."""
        if def_path is not None and (def_path, full_name) in self._by_path_name:
            return self._by_path_name[(def_path, full_name)]
        return self._by_name.get(full_name)

    def texts(self, ids: Iterable[int] | None = None) -> list[str]:
        """Serialized premises (all, or the given indices)."""
        rng = range(len(self.premises)) if ids is None else ids
        return [self.premises[i].serialize() for i in rng]

    @property
    def imports_known(self) -> bool:
        """Whether every file's imports are known (False for a corpus built from annotations)."""
        return not self.unknown_imports

    def imports_unknown(self, path: str) -> bool:
        """Whether what ``path`` can see is unknown: its imports, or those of a file it imports."""
        hit = self._open_files.get(path)
        if hit is None:
            hit = path in self.unknown_imports or any(
                d in self.unknown_imports for d in self.graph.transitive_imports(path)
            )
            self._open_files[path] = hit
        return hit

    def _own_after(self, path: str, pos: Sequence[int] | None) -> list[int]:
        """The premises of ``path`` that do not end before ``pos`` (none when ``pos`` is None)."""
        if pos is None:
            return []
        p = tuple(pos)
        return [i for i in self.file_premises.get(path, ()) if not self.premises[i].end < p]

    def accessible_ids(self, path: str, pos: Sequence[int] | None = None) -> np.ndarray:
        """Sorted indices of the premises accessible from ``pos`` in file ``path``.

        ``pos=None`` means the end of the file. For a file whose imports are unknown
        (:meth:`imports_unknown`) every premise outside it is accessible, plus its own that end
        before ``pos``. For a file the corpus does not know every premise is accessible.
        """
        if path not in self.file_premises:
            if not self.unknown_imports and path not in self._warned:
                self._warned.add(path)
                log.warning(
                    "file %s is not in the corpus: treating every premise as accessible", path
                )
            return np.arange(len(self.premises))
        if self.imports_unknown(path):
            return np.flatnonzero(self.accessible_mask(path, pos))
        if path not in self._import_ids:
            ids: list[int] = []
            for dep in self.graph.transitive_imports(path):
                ids.extend(self.file_premises.get(dep, ()))
            self._import_ids[path] = np.asarray(sorted(ids), dtype=np.int64)
        own = self.file_premises[path]
        if pos is not None:
            p = tuple(pos)
            own = [i for i in own if self.premises[i].end < p]
        if not own:
            return self._import_ids[path]
        return np.union1d(self._import_ids[path], np.asarray(own, dtype=np.int64))

    def is_accessible(self, idx: int, path: str, pos: Sequence[int] | None = None) -> bool:
        """Whether premise ``idx`` is accessible from ``pos`` in ``path`` (as :meth:`accessible_ids`
        says, without building the whole set)."""
        prem = self.premises[idx]
        if path not in self.file_premises:
            return True
        if prem.path == path:
            return pos is None or prem.end < tuple(pos)
        if self.imports_unknown(path):
            return True
        return prem.path in self.graph.transitive_imports(path)

    def accessible_mask(self, path: str, pos: Sequence[int] | None = None) -> np.ndarray:
        """Boolean mask over the corpus of :meth:`accessible_ids`."""
        if path in self.file_premises and self.imports_unknown(path):
            mask = np.ones(len(self.premises), dtype=bool)
            mask[self._own_after(path, pos)] = False
            return mask
        mask = np.zeros(len(self.premises), dtype=bool)
        mask[self.accessible_ids(path, pos)] = True
        return mask

    def fingerprint_text(self) -> str:
        """A canonical text of the corpus content (for index fingerprints)."""
        return "\n".join(
            f"{p.path}\t{p.full_name}\t{p.start}\t{p.end}\t{p.code}" for p in self.premises
        )
