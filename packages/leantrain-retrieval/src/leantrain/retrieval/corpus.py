"""The premise corpus: ``corpus.jsonl`` (files, imports, premises) with fast lookups.

When an export has no ``corpus.jsonl`` (e.g. LeanDojo benchmark directories), the corpus is
built from the premise annotations of the splits (name, defining file, positions; code = the
name). Imports are then unknown, so every premise counts as accessible from every file.
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
        self.imports_known = imports_known
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
        self.graph = ImportGraph({f.path: f.imports for f in files}, source=source)
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
            "(code = premise name, imports unknown, so every premise counts as accessible)",
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

    def accessible_ids(self, path: str, pos: Sequence[int] | None = None) -> np.ndarray:
        """Sorted indices of the premises accessible from ``pos`` in file ``path``.

        ``pos=None`` means the end of the file. Without import information (a corpus built
        from annotations) or for a file the corpus does not know, every premise is accessible.
        """
        if not self.imports_known or path not in self.file_premises:
            if self.imports_known and path not in self._warned:
                self._warned.add(path)
                log.warning(
                    "file %s is not in the corpus: treating every premise as accessible", path
                )
            return np.arange(len(self.premises))
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

    def accessible_mask(self, path: str, pos: Sequence[int] | None = None) -> np.ndarray:
        """Boolean mask over the corpus of :meth:`accessible_ids`."""
        mask = np.zeros(len(self.premises), dtype=bool)
        mask[self.accessible_ids(path, pos)] = True
        return mask

    def fingerprint_text(self) -> str:
        """A canonical text of the corpus content (for index fingerprints)."""
        return "\n".join(
            f"{p.path}\t{p.full_name}\t{p.start}\t{p.end}\t{p.code}" for p in self.premises
        )
