"""The import DAG of a corpus and the premises accessible from a point in a file.

ReProver's rule: from a theorem at position ``pos`` of file ``F``, the accessible premises are
those of every file that ``F`` imports transitively, plus those of ``F`` itself that end before
``pos``. An import cycle is an error (Lean forbids one, so the corpus is corrupted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from leantrain.core.errors import DataError


class ImportGraph:
    """Files and their direct imports; answers transitive-import queries (memoised)."""

    def __init__(
        self, imports: Mapping[str, Sequence[str]], *, source: str | Path | None = None
    ) -> None:
        self.imports = {path: list(dict.fromkeys(deps)) for path, deps in imports.items()}
        self.source = source
        self._closure: dict[str, frozenset[str]] = {}
        self.check_acyclic()

    def check_acyclic(self) -> None:
        """Raise :class:`DataError` naming the cycle when the imports are not a DAG."""
        state: dict[str, int] = {}  # 1 = on the current path, 2 = done
        for root in self.imports:
            if state.get(root):
                continue
            stack: list[tuple[str, int]] = [(root, 0)]
            path: list[str] = [root]
            state[root] = 1
            while stack:
                node, i = stack[-1]
                deps = [d for d in self.imports.get(node, []) if d in self.imports]
                if i < len(deps):
                    stack[-1] = (node, i + 1)
                    dep = deps[i]
                    if state.get(dep) == 1:
                        cycle = [*path[path.index(dep) :], dep]
                        raise DataError(
                            self.source,
                            f"import cycle: {' -> '.join(cycle)}",
                            field="imports",
                            hint="Lean imports form a DAG; re-export the corpus from a clean trace",
                        )
                    if not state.get(dep):
                        state[dep] = 1
                        stack.append((dep, 0))
                        path.append(dep)
                else:
                    state[node] = 2
                    stack.pop()
                    path.pop()

    def transitive_imports(self, path: str) -> frozenset[str]:
        """Every file ``path`` imports directly or indirectly (not ``path`` itself)."""
        if path in self._closure:
            return self._closure[path]
        # Iterative post-order so deep import chains do not hit the recursion limit.
        stack = [path]
        while stack:
            node = stack[-1]
            pending = [
                d
                for d in self.imports.get(node, [])
                if d in self.imports and d not in self._closure and d != node
            ]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if node in self._closure:
                continue
            acc: set[str] = set()
            for d in self.imports.get(node, []):
                if d in self.imports:
                    acc.add(d)
                    acc |= self._closure[d]
            self._closure[node] = frozenset(acc)
        return self._closure[path]
