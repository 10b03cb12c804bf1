"""Whole-proof generation: ``leantrain prove --mode whole --attempts k``.

The generator writes the whole proof of each theorem from its statement (DeepSeek-Prover,
Kimina-Prover, Goedel-Prover style), asked with :func:`leantrain.tactics.whole_proof.
whole_proof_prompt` — the prompt SFT and GRPO train on. ``k`` proofs are sampled per theorem
(sampling at ``temperature`` on ``--engine`` hf, ct2 or vllm, as the tactic search samples;
pass@k counts independent samples; ``--decoding`` is the search's), each theorem seeded from
(``seed``, theorem id) so a resumed run samples as an unbroken one, and each is checked whole:

``replay``
    offline: a proof counts only when it equals (whitespace normalised, as the Lean check
    receives it) the theorem's traced proof — its ``formal_proof``, or its traced tactics
    joined as a ``by`` block. Every other proof counts as a failure, so the rate is the
    **replay whole proof rate**, a lower bound (``replay_pass@k`` in the summary). It needs no
    statement text: a theorem without one (LeanDojo Benchmark 4) is asked in the state form of
    :func:`~leantrain.tactics.whole_proof.whole_proof_prompt` (its name and traced initial
    state), as ``--mode whole`` SFT trained it; its ``proofs.json`` record then has no
    statement either (the Lean backends read the statement from ``--lean-project`` and ask in
    the source form).
``repl`` / ``pantograph`` / ``kimina``
    Lean's whole-theorem check through leantrain-lean's contract, screened and judged by the
    same soundness rules as every found proof (:func:`leantrain.lean.check_proof`); the ``k``
    proofs of a theorem go to the backend in one batch where it can (``kimina``).

With ``--feedback-rounds 1`` each failed attempt is asked once more, with the failed proof and
Lean's messages in the prompt (one round of error feedback); the attempt counts when either
proof passes. The summary has pass@1…k (:func:`leantrain.prover.passk.pass_at_k_table`, the
unbiased estimator) and the costs: wall, generator and Lean seconds, Lean checks, generated
tokens. Found proofs go into ``proofs.json`` as theorem records with ``formal_proof``
(``proof_origin`` ``found``) and ``proof`` (the tactic script ``leantrain verify`` re-checks);
``results.jsonl`` has a row per theorem with every attempt's outcome, so a killed run resumes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from leantrain.core.errors import ConfigError
from leantrain.core.lean_text import normalize_whitespace
from leantrain.core.schemas import Theorem
from leantrain.lean.soundness import Verdict, judge, screen_proof
from leantrain.prover.passk import pass_at_k_table
from leantrain.prover.prover_config import ProverConfig
from leantrain.prover.results import ResultStore
from leantrain.prover.summary import ledger, summarize
from leantrain.tactics.whole_proof import (
    WHOLE_PROOF_SYSTEM_PROMPT,
    extract_proof,
    proof_script,
    tactics_proof,
    theorem_statement_form,
    top_level_tactics,
    whole_proof_prompt,
)

REPLAY_WHOLE_METRIC = "replay whole proof rate"
"""The share of theorems proved at least once under the replay check (a lower bound)."""
WHOLE_METRIC = "whole proof rate"
WHOLE_BACKENDS = ("replay", "repl", "pantograph", "kimina")


@dataclass(frozen=True)
class Sample:
    """One generated reply: its text, its generated tokens, whether it ended (EOS)."""

    text: str
    tokens: int
    finished: bool


class ProofSampler(Protocol):
    """Samples ``k`` replies per chat prompt."""

    def sample(self, prompts: Sequence[list[dict[str, str]]], k: int) -> list[list[Sample]]:
        """``k`` samples per prompt, in prompt order."""
        ...


class EngineProofSampler:
    """:class:`ProofSampler` over a generation engine's
    :class:`~leantrain.prover.generator.ChatGenerator` (``--engine hf|ct2|vllm``: its model
    loading, ``prompt.json`` handling and batching; ``hf`` and ``ct2`` stop at the theorem's
    deadline, vLLM's offline call runs out), sampling always: each reply as the engine wrote it
    (duplicates kept: pass@k counts independent samples), ``finished`` when it ended with the
    end-of-turn token."""

    def __init__(self, generator: Any) -> None:
        self.generator = generator
        generator.decoding = "sample"

    def sample(self, prompts: Sequence[list[dict[str, str]]], k: int) -> list[list[Sample]]:
        """``k`` sampled replies per prompt (assistant turn opened by the chat template)."""
        tok = self.generator.tokenizer
        texts = [
            str(tok.apply_chat_template(m, tokenize=False, add_generation_prompt=True))
            for m in prompts
        ]
        rows = self.generator._complete(texts, k)
        return [[Sample(c.tactic, c.tokens, c.reason == "stop") for c in row] for row in rows]


@dataclass(frozen=True)
class Checked:
    """A proof's verdict and the Lean messages a feedback prompt shows."""

    verdict: Verdict
    messages: str = ""


class ReplayProofCheck:
    """Accepts exactly the traced proof (see the module docstring); no Lean."""

    name = "replay"
    metric = REPLAY_WHOLE_METRIC
    calls = 0

    def target(self, theorem: Theorem) -> Theorem:
        """The theorem as prompts show it (its own statement)."""
        return theorem

    def check_many(self, items: Sequence[tuple[Theorem, str]]) -> list[Checked]:
        """The verdict on each ``(theorem, proof)``."""
        out = []
        for theorem, proof in items:
            refused = screen_proof(proof)
            references = set()
            if theorem.formal_proof and theorem.formal_proof.strip():
                references.add(normalize_whitespace(proof_script(theorem.formal_proof)))
            if (top := top_level_tactics(theorem.traced_tactics)) is not None:
                references.add(normalize_whitespace(proof_script(tactics_proof(top))))
            if refused is not None:
                out.append(Checked(Verdict("rejected", refused), refused))
            elif proof.strip() and normalize_whitespace(proof_script(proof)) in references:
                out.append(Checked(Verdict("proved")))
            else:
                why = "not the traced proof (replay check: a lower bound)"
                out.append(Checked(Verdict("rejected", why), why))
        return out

    def close(self) -> None:
        """Nothing to release."""


class LeanProofCheck:
    """Lean's whole-theorem check through a leantrain-lean backend, judged by the soundness
    rules; the statement of an export's theorem read from ``lean_project``."""

    metric = WHOLE_METRIC

    def __init__(self, backend: Any, allowed_axioms: Sequence[str], lean_project: str | None):
        from leantrain.prover.backend import LeanContractBackend

        self.backend, self.name = backend, str(backend.name)
        self.allowed = tuple(allowed_axioms)
        self.contract = LeanContractBackend(backend, lean_project)
        self.calls = 0

    def target(self, theorem: Theorem) -> Theorem:
        """The theorem with the statement and header Lean is asked about (also in the prompt);
        :class:`~leantrain.prover.backend.BackendError` when it cannot be read."""
        lean = self.contract.lean_theorem(theorem)
        return theorem.model_copy(
            update={"theorem_statement": lean.statement, "header": lean.header}
        )

    def check_many(self, items: Sequence[tuple[Theorem, str]]) -> list[Checked]:
        """The verdicts, the screened proofs sent to Lean in one batch where it can."""
        out: list[Checked | None] = []
        todo = []
        for theorem, proof in items:
            refused = screen_proof(proof) or (None if proof.strip() else "the proof is empty")
            out.append(None if refused is None else Checked(Verdict("rejected", refused), refused))
            if refused is None:
                todo.append((len(out) - 1, self.contract.lean_theorem(theorem), proof))
        pairs = [(lean, proof_script(proof)) for _, lean, proof in todo]
        many = getattr(self.backend, "check_many", None)
        results = many(pairs) if callable(many) else [self.backend.check(*p) for p in pairs]
        self.calls += len(pairs)
        for (i, lean, _), result in zip(todo, results):
            verdict = judge(result, lean.name, self.allowed)
            messages = "\n".join(e.strip() for e in result.errors[:5]) or verdict.reason
            out[i] = Checked(verdict, messages)
        return [c for c in out if c is not None]

    def close(self) -> None:
        """Close the backend."""
        self.backend.close()


def make_checker(cfg: ProverConfig) -> ReplayProofCheck | LeanProofCheck:
    """The whole-proof check ``cfg.backend`` names (its executable or URL checked now: one line
    before any model loads)."""
    if cfg.backend == "replay":
        return ReplayProofCheck()
    if cfg.backend not in WHOLE_BACKENDS:
        raise ConfigError(
            f"--backend {cfg.backend} cannot check whole proofs with --mode whole",
            hint=f"choose one of: {', '.join(WHOLE_BACKENDS)}",
        )
    from leantrain.lean import build_backend

    backend = build_backend(cfg.backend, cfg, choices=WHOLE_BACKENDS[1:])
    return LeanProofCheck(backend, cfg.allowed_axioms, cfg.lean_project)


class WholeResultStore(ResultStore):
    """The run directory of a whole-proof run: its summary has pass@k and the costs."""

    def summary(self) -> dict[str, Any]:
        """:func:`summarize_whole` of the rows so far."""
        return summarize_whole(self.rows, self.metric)


def summarize_whole(rows: Sequence[Mapping[str, Any]], metric: str) -> dict[str, Any]:
    """The step-wise summary's counts (proved at least once), pass@1…k (``replay_pass@k``
    under replay: a lower bound) and the costs, summed over theorems."""
    base = summarize(rows, metric)  # its pass@k, searches and ledger are step-wise: redone
    for key in ("mean_expansions", "mean_tactics_tried", "tactics_cut_off", "rejected", "searches"):
        base.pop(key, None)
    table = pass_at_k_table([(str(r["id"]), r["outcomes"]) for r in rows]) if rows else {}
    prefix = "replay_" if metric.startswith("replay") else ""
    base.update({prefix + k: v for k, v in table.items()})
    base.update(pass_at_k=table, pass_at_k_theorems=len(rows))
    costs = [{**r, "wall_s": r.get("time_s"), "tokens_generated": r.get("tokens")} for r in rows]
    base["ledger"] = ledger(costs, base["proved"])
    base["ledger"].pop("expansions")  # no search tree
    for key in ("time_s", "generator_time_s", "backend_time_s"):
        base[key] = round(sum(float(r.get(key, 0.0)) for r in rows), 4)
    for key in ("lean_calls", "tokens", "proofs_cut_off"):
        base[key] = sum(int(r.get(key, 0)) for r in rows)
    base["attempts"] = len(rows[0]["outcomes"]) if rows else 0
    return base


def found_record(theorem: Theorem, proof: str) -> dict[str, Any]:
    """The theorem with the found whole proof: ``formal_proof`` (``proof_origin`` ``found``)
    and ``proof``, the tactic script ``leantrain verify`` re-checks."""
    keep = ("url", "commit", "file_path", "full_name", "theorem_statement", "header", "start")
    record = {k: v for k, v in theorem.to_json().items() if k in (*keep, "end")}
    record.update(
        traced_tactics=[], formal_proof=proof, proof_origin="found", proof=proof_script(proof)
    )
    return record


class WholeProver:
    """Samples, checks and records whole proofs (see the module docstring)::

        prover = WholeProver(generator="runs/sft", data="export", backend="replay",
                             attempts=8, output_dir="pw")
        summary = prover.evaluate()      # pass@1…8; a rerun resumes

    ``cfg`` is a :class:`ProverConfig`, a dict of its keys, or keys given as keywords (``mode``
    is ``whole``). ``sampler`` and ``checker`` objects replace the generator and backend the
    config names (tests)."""

    def __init__(
        self,
        cfg: ProverConfig | Mapping[str, Any] | None = None,
        *,
        sampler: ProofSampler | None = None,
        checker: Any = None,
        **settings: Any,
    ) -> None:
        if not isinstance(cfg, ProverConfig):  # a dict or keywords, as Prover takes
            from leantrain.core.config import config_from_dict

            values = {**dict(cfg or {}), **settings, "mode": "whole"}
            cfg = config_from_dict(ProverConfig, values)
        self.cfg = cfg
        self.checker = checker if checker is not None else make_checker(cfg)
        self.system_prompt = self._system_prompt(model_required=sampler is None)
        self.store = (
            WholeResultStore(cfg.output_dir, self.tracked(), self.checker.metric, _defaults())
            if cfg.output_dir
            else None
        )
        if self.store is not None:
            self.store.check()  # another config in output_dir: refused before any model loads
        if sampler is None:
            from leantrain.prover.prover import load_generator

            if not cfg.generator:
                raise ConfigError("no generator given", hint="pass --generator RUN_OR_MODEL")
            sampler = EngineProofSampler(
                load_generator(
                    cfg,
                    self.system_prompt,
                    None,
                    decoding="sample",
                    max_new_tokens=cfg.max_proof_tokens,
                )
            )
        self.sampler = sampler

    def _system_prompt(self, *, model_required: bool) -> str | None:
        """The generator's prompt (its ``prompt.json``, ``mode`` included; a step-wise model is
        the prompt conflict), whose tactic default becomes the whole-proof default."""
        from leantrain.prover.premise_prompts import model_prompt
        from leantrain.tactics import DEFAULT_SYSTEM_PROMPT

        prompt = model_prompt(self.cfg, model_required=model_required)
        if prompt.retriever is not None:
            raise ConfigError(
                "--mode whole asks without retrieved premises, and a retriever is set "
                f"({prompt.retriever})",
                hint="leave --retriever out (or give --retriever '')",
            )
        if prompt.system_prompt == DEFAULT_SYSTEM_PROMPT:
            return WHOLE_PROOF_SYSTEM_PROMPT
        return prompt.system_prompt or None

    def tracked(self) -> dict[str, Any]:
        """What ``prover_config.json`` records: the config's tracked settings and the system
        prompt asked with; ``attempts`` too (pass@k needs the same count for every theorem)."""
        return {
            **self.cfg.tracked(),
            "attempts": self.cfg.attempts,
            "whole_system_prompt": self.system_prompt,
        }

    def _sample(
        self, prompts: list[list[dict[str, str]]], k: int
    ) -> tuple[list[list[Sample]], float]:
        start = time.monotonic()
        return self.sampler.sample(prompts, k), time.monotonic() - start

    def _check(self, items: list[tuple[Theorem, str]]) -> tuple[list[Checked], float]:
        start = time.monotonic()
        return self.checker.check_many(items), time.monotonic() - start

    def prove(self, theorem: Theorem, split: str = "") -> dict[str, Any]:
        """The result row of ``theorem``: ``outcomes`` (one per attempt), ``proved`` (any),
        ``proof`` (the first that passed), ``error`` (the first failure's reason), costs."""
        import torch
        from leantrain.prover.backend import BackendError
        from leantrain.prover.prover import _exception_line
        from leantrain.prover.shards import attempt_seed
        from leantrain.prover.theorems import repository, theorem_id

        k, start = self.cfg.attempts, time.monotonic()
        # seeded per theorem, so a resumed run samples as an unbroken one
        seed = attempt_seed(self.cfg.seed, theorem_id(theorem), 0)
        torch.manual_seed(seed)
        inner = getattr(self.sampler, "generator", None)
        if callable(reseed := getattr(inner, "reseed", None)):
            reseed(seed)  # an engine with its own random state (ct2, vllm)
        row: dict[str, Any] = {
            "id": theorem_id(theorem),
            "full_name": theorem.full_name,
            "file_path": theorem.file_path,
            "repository": repository(theorem),
            "split": split,
            "backend": self.checker.name,
            "mode": "whole",
            "proved": False,
            "status": "failed",
            "outcomes": [False] * k,
            "proof": None,
            "error": None,
            "generator_time_s": 0.0,
            "backend_time_s": 0.0,
            "lean_calls": 0,
            "tokens": 0,
            "proofs_cut_off": 0,
            "checked": False,
            "axioms": None,
            "traced": None,
        }
        calls_before = self.checker.calls
        if inner is not None:
            inner.deadline = start + float(self.cfg.timeout)
        try:
            target = self.checker.target(theorem)
            if theorem_statement_form(target) is None:
                raise BackendError(
                    f"{theorem.full_name}: no statement to ask for a proof of (no "
                    "theorem_statement and no traced initial state)"
                )
            self._attempt(target, row)
        except BackendError as e:
            row.update(status="init_failed", error=e.one_line())
        except Exception as e:  # an OOM, a backend's bug: this theorem is an error row
            row.update(status="error", error=_exception_line(e))
        finally:
            if inner is not None:
                inner.deadline = None
        row["lean_calls"] = self.checker.calls - calls_before
        row["time_s"] = round(time.monotonic() - start, 4)
        for key in ("generator_time_s", "backend_time_s"):
            row[key] = round(row[key], 4)
        return row

    def _attempt(self, target: Theorem, row: dict[str, Any]) -> None:
        k = self.cfg.attempts
        prompt = whole_proof_prompt(target, self.system_prompt)
        (samples,), seconds = self._sample([prompt], k)
        row["generator_time_s"] += seconds
        samples = [*samples, *[Sample("", 0, True)] * k][:k]  # a missing sample: an empty proof
        proofs = self._proofs(samples, row)
        checked, seconds = self._check([(target, p) for p in proofs])
        row["backend_time_s"] += seconds
        results: list[tuple[str, Checked]] = list(zip(proofs, checked))
        if self.cfg.feedback_rounds:
            retry = [i for i, (_, c) in enumerate(results) if not c.verdict.proved]
            prompts = [
                whole_proof_prompt(
                    target, self.system_prompt, feedback=(results[i][0], results[i][1].messages)
                )
                for i in retry
            ]
            if prompts:
                again, seconds = self._sample(prompts, 1)
                row["generator_time_s"] += seconds
                second = self._proofs([s[0] for s in again], row)
                rechecked, seconds = self._check([(target, p) for p in second])
                row["backend_time_s"] += seconds
                for i, proof, c in zip(retry, second, rechecked):
                    if c.verdict.proved:
                        results[i] = (proof, c)
        row["outcomes"] = [c.verdict.proved for _, c in results]
        passed = [(p, c) for p, c in results if c.verdict.proved]
        if passed:
            proof, c = passed[0]
            row.update(proved=True, status="proved", proof=proof)
            row["checked"] = self.checker.name != "replay"
            row["axioms"] = None if c.verdict.axioms is None else list(c.verdict.axioms)
            row["traced"] = found_record(target, proof)
        else:
            failed = results[0][1].verdict
            row["error"] = f"{failed.status}: {failed.reason}"

    def _proofs(self, samples: Sequence[Sample], row: dict[str, Any]) -> list[str]:
        """The proofs of ``samples``; one cut off at the token limit is no proof (``""``)."""
        row["tokens"] += sum(s.tokens for s in samples)
        row["proofs_cut_off"] += sum(not s.finished for s in samples)
        return [extract_proof(s.text) if s.finished else "" for s in samples]

    def evaluate(
        self,
        theorems: Sequence[Theorem] | None = None,
        split: str | None = None,
        *,
        show_progress: bool | None = None,
    ) -> dict[str, Any]:
        """Prove ``theorems`` (default: the config's ``data`` / ``split`` / ``theorems`` /
        ``max_theorems``; those already in ``output_dir`` skipped) and summarise."""
        from leantrain.prover.theorems import selected_theorems, theorem_id
        from tqdm.auto import tqdm

        cfg = self.cfg
        split = cfg.split if split is None else split
        if theorems is None:
            theorems = selected_theorems(cfg)

        contract = getattr(self.checker, "contract", None)
        if contract is not None:  # an export's theorem without --lean-project: one line
            contract.check_theorems(theorems)
        done = {tid for tid, _ in self.store.open()} if self.store is not None else set()
        rows = list(self.store.rows) if self.store is not None else []
        show = self.cfg.progress_bar if show_progress is None else show_progress
        bar = tqdm(theorems, desc="proving", unit="thm", disable=not show, dynamic_ncols=True)
        for theorem in bar:
            if theorem_id(theorem) in done:
                continue
            row = self.prove(theorem, split)
            rows.append(row)
            done.add(row["id"])
            if self.store is not None:
                self.store.add(row)
            bar.set_postfix_str(
                f"{self.checker.metric} {sum(r['proved'] for r in rows)}/{len(rows)}"
            )
        if self.store is not None:
            self.store.write_summary()
            self.store.write_proofs()
        wanted = {theorem_id(t) for t in theorems}
        return summarize_whole([r for r in rows if r["id"] in wanted], self.checker.metric)


def _defaults() -> dict[str, Any]:
    from leantrain.prover.prover_config import tracked_defaults

    return tracked_defaults()


def one_line_whole(summary: Mapping[str, Any]) -> str:
    """``replay whole proof rate: 2/3 (66.7 %); replay_pass@1 0.417 …`` — the headline."""
    from leantrain.prover.summary import metric_key

    key = metric_key(summary["metric"])
    line = (
        f"{summary['metric']}: {summary['proved']}/{summary['attempted']} "
        f"({100 * summary[key]:.1f} %)"
    )
    passes = [f"{k} {v:.3f}" for k, v in summary.items() if "pass@" in k]
    if passes:
        line += "; " + ", ".join(passes)
    if summary["metric"].startswith("replay"):
        line += " — a lower bound: proofs other than the traced ones count as failures"
    else:
        line += " — every proof checked whole by Lean"
    return line


def prove_whole(
    cfg: ProverConfig, results_file: Path | None = None, *, sampler: ProofSampler | None = None
) -> dict[str, Any]:
    """``leantrain prove --mode whole``: the summary (its headline on stderr)."""
    import sys

    from leantrain.core.atomic import atomic_write_bytes
    from leantrain.prover.results import RESULTS
    from leantrain.prover.theorems import selected_theorems

    theorems = selected_theorems(cfg)
    checker = make_checker(cfg)  # a missing REPL or a bad URL: one line before the model
    try:
        summary = WholeProver(cfg, sampler=sampler, checker=checker).evaluate(theorems, cfg.split)
    finally:
        checker.close()
    where = cfg.output_dir
    if results_file is not None:
        atomic_write_bytes(results_file, (Path(str(cfg.output_dir)) / RESULTS).read_bytes())
        where = f"{results_file} (the run, to resume: {cfg.output_dir}/)"
    print(one_line_whole(summary) + f"; results in {where}", file=sys.stderr)
    return summary
