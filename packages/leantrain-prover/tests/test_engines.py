"""Engines behind the generator protocol: CTranslate2 against ``hf`` on a tiny model, vLLM
against a fake of its offline API, the tactic score, and how prove picks its progress model."""

from __future__ import annotations

import logging
import sys
import types
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
import torch
from leantrain.core.errors import ConfigError
from leantrain.core.parser import parse
from leantrain.prover import Prover, ReplayBackend
from leantrain.prover.engines import VLLMGenerator, ct2_model, load_generator
from leantrain.prover.generator import Candidate, ChatGenerator, HFGenerator
from leantrain.prover.prover_config import ProveArgs
from leantrain.tactics import DEFAULT_SYSTEM_PROMPT

STATE = "n : ℕ\n⊢ n + 0 = n"
OTHER = "p q : Prop\nhp : p\n⊢ p ∨ q"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A random-init tiny Llama-style model (the architecture of SmolLM2) saved in float32."""
    from leantrain.llm import build_tiny_model

    model, tokenizer = build_tiny_model(seed=5)
    path = tmp_path_factory.mktemp("tiny") / "model"
    model.float().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


# --- CTranslate2 -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ct2_pair(tiny_dir, tmp_path_factory):
    pytest.importorskip("ctranslate2", reason="needs leantrain-prover[ct2] (ctranslate2)")
    from leantrain.prover.engines import CT2Generator

    options = {"system_prompt": DEFAULT_SYSTEM_PROMPT, "max_new_tokens": 6, "batch_size": 2}
    hf = HFGenerator.from_pretrained(tiny_dir, device="cpu", **options)
    hf.model.float()
    cache = tmp_path_factory.mktemp("ct2-cache")
    ct2 = CT2Generator.from_pretrained(
        tiny_dir, cache_dir=cache, device="cpu", compute_type="float32", **options
    )
    return hf, ct2, cache


TOLERANCE = 2e-3
"""The stated tolerance: |ct2 − hf| per candidate log-probability (nats), float32 compute."""


@pytest.mark.slow  # converts a model and runs both engines (~30 s on 2 cores)
def test_ct2_gives_the_hf_prompt_candidates_and_scores(ct2_pair):
    """Same prompt, same top candidates (beam, k = 4), the same raw log-probabilities within
    TOLERANCE (hf's are the forward pass's: test_generator.py; CTranslate2's are its
    length-normalised scores times the length); candidates cut off at max_new_tokens are
    ``length`` in both."""
    hf, ct2, _ = ct2_pair
    assert ct2.prompt(STATE) == hf.prompt(STATE)
    ours = ct2.candidates([STATE, OTHER], 4)
    theirs = hf.candidates([STATE, OTHER], 4)
    for a, b in zip(ours, theirs):
        assert a[0][0] == b[0][0]  # the same best candidate
        assert a[0][1] == pytest.approx(b[0][1], abs=TOLERANCE)
        common = {t for t, _, _ in a} & {t for t, _, _ in b}
        assert len(common) >= 3
        score_b = {t: (lp, r) for t, lp, r in b}
        for tactic, lp, reason in a:
            if tactic in common:
                assert lp == pytest.approx(score_b[tactic][0], abs=TOLERANCE)
                assert reason == score_b[tactic][1]


@pytest.mark.slow
def test_ct2_drops_and_counts_cut_off_candidates_and_samples(ct2_pair):
    """All candidates of 6 tokens are cut off: none is proposed, all are counted; sampling
    gives k scored candidates too."""
    _, ct2, _ = ct2_pair
    before = ct2.unfinished
    assert ct2.propose([STATE], 3) == [[]]
    assert ct2.unfinished - before == len(ct2.candidates([STATE], 3)[0])
    ct2.decoding = "sample"
    try:
        [row] = ct2.candidates([STATE], 4)
    finally:
        ct2.decoding = "beam"
    assert 1 <= len(row) <= 4 and all(lp < 0 for _, lp, _ in row)


class _Spy:
    """A ``ctranslate2.Generator`` stand-in that records each ``generate_batch`` call."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, []

    def generate_batch(self, starts, **options):
        results = self.inner.generate_batch(starts, **options)
        self.calls.append((starts, results))
        return results


@pytest.mark.slow
@pytest.mark.parametrize("decoding", ["beam", "sample"])
def test_ct2_scores_are_the_raw_sums_of_a_forward_pass(ct2_pair, decoding):
    """Each candidate's log-probability is the sum over its tokens (end-of-turn included) of a
    forward pass's raw log-softmax, for beam search (length penalty 1, un-normalised) and
    sampling — also for a prompt that shares its call with a shorter one (CTranslate2 decodes
    the rest of it token by token, unscored); a prompt far longer goes in a call of its own."""
    from leantrain.prover.engines import LENGTH_SPREAD
    from test_generator import _manual_logprob

    hf, ct2, _ = ct2_pair
    long = OTHER.replace(
        "hp : p\n", "".join(f"h{i} : p\n" for i in range(LENGTH_SPREAD)) + "hp : p\n"
    )
    prompts = [ct2.prompt(STATE), ct2.prompt(long), ct2.prompt(OTHER)]
    lengths = [len(ct2.prompt_ids(p)) for p in prompts]
    assert (
        0 < abs(lengths[0] - lengths[2]) <= LENGTH_SPREAD < lengths[1] - max(lengths[0], lengths[2])
    )
    real, spy = ct2.generator, _Spy(ct2.generator)
    ct2.generator, ct2.decoding = spy, decoding
    try:
        rows = ct2._complete(prompts, 3)
    finally:
        ct2.generator, ct2.decoding = real, "beam"
    assert sorted(len(starts) for starts, _ in spy.calls) == [1, 2]
    results = {}
    for starts, call in spy.calls:
        for start, result in zip(starts, call):
            results[ct2.tokenizer.convert_tokens_to_string(start)] = result
    for prompt, row in zip(prompts, rows):
        [result] = [r for text, r in results.items() if text == prompt]
        assert len(row) == len(result.sequences_ids) == 3
        for cand, ids in zip(row, result.sequences_ids):
            reference = _manual_logprob(hf.model, ct2.tokenizer, prompt, list(ids))
            assert cand.logprob == pytest.approx(reference, abs=TOLERANCE)
            assert cand.tokens == len(ids)


def test_ct2_batches_prompts_of_near_token_lengths():
    """CTranslate2 forwards a call's prompts at once only up to the shortest one."""
    from leantrain.prover.engines import _length_groups

    starts = [["a"] * n for n in (30, 3, 50, 5, 20, 4)]
    assert _length_groups(starts, 2, spread=16) == [[1, 5], [3, 4], [0], [2]]
    assert _length_groups(starts, 8, spread=16) == [[1, 5, 3], [4, 0], [2]]
    assert _length_groups(starts, 8, spread=0) == [[1], [5], [3], [4], [0], [2]]


def test_auto_compute_type_is_int8_only_where_int8_sums_are_exact(monkeypatch):
    """x86 without VNNI/AMX (oneDNN's u8s8 GEMM saturates): float32; with them, or on ARM: int8;
    CUDA: int8_float16; an explicit type is kept."""
    from leantrain.prover import engines

    avx2 = "processor\t: 0\nflags\t\t: fpu sse4_1 avx avx2 fma\n"
    vnni = "flags\t\t: fpu avx2 avx512f avx512_vnni\n"
    assert not engines.cpu_int8_is_exact(avx2, "x86_64")
    assert engines.cpu_int8_is_exact(vnni, "x86_64")
    assert engines.cpu_int8_is_exact("flags\t: avx_vnni\n", "AMD64")
    assert engines.cpu_int8_is_exact("", "aarch64")
    monkeypatch.setattr(engines, "cpu_int8_is_exact", lambda: False)
    assert engines.ct2_compute_type("auto", "cpu") == "float32"
    monkeypatch.setattr(engines, "cpu_int8_is_exact", lambda: True)
    assert engines.ct2_compute_type("auto", "cpu") == "int8"
    assert engines.ct2_compute_type("auto", "cuda") == "int8_float16"
    assert engines.ct2_compute_type("int8", "cpu") == "int8"


@pytest.mark.slow
def test_whole_proofs_are_sampled_by_the_chosen_engine_and_reseeded_per_theorem(
    ct2_pair, tiny_dir, tmp_path
):
    """``prove --mode whole --engine ct2`` samples on CTranslate2 (not silently on ``hf``), and
    each theorem is seeded from (seed, theorem id): two runs, the second after other sampling,
    sample the same proofs."""
    import json

    from leantrain.core.config import config_from_dict
    from leantrain.core.sample import sample_data_dir
    from leantrain.prover.engines import CT2Generator
    from leantrain.prover.prover_config import ProverConfig
    from leantrain.prover.theorems import load_split
    from leantrain.prover.whole import WholeProver

    _, ct2, cache = ct2_pair
    data = sample_data_dir() / "nat-basics"

    def run(out: str, disturb: bool = False) -> list[list[str]]:
        cfg = config_from_dict(
            ProverConfig,
            {
                "mode": "whole",
                "data": str(data),
                "generator": str(tiny_dir),
                "engine": "ct2",
                "ct2_compute_type": "float32",
                "engine_cache": str(cache),
                "output_dir": str(tmp_path / out),
                "attempts": 2,
                "max_proof_tokens": 6,
                "progress_bar": False,
                "device": "cpu",
            },
        )
        prover = WholeProver(cfg)
        assert isinstance(prover.sampler.generator, CT2Generator)
        if disturb:  # moves CTranslate2's random state on after the load seeded it
            prover.sampler.generator._complete([ct2.prompt(STATE)], 4)
        sampled: list = []
        inner = prover.sampler.sample
        prover.sampler.sample = lambda prompts, k: sampled.append(inner(prompts, k)) or sampled[-1]
        prover.evaluate(load_split(data, "test")[:2], "test")
        lines = (tmp_path / out / "results.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines]
        assert len(rows) == 2 and all(len(r["outcomes"]) == 2 for r in rows)
        assert all(0 < r["tokens"] <= 2 * 6 for r in rows)
        return [[s.text for s in row] for batch in sampled for row in batch]

    first = run("a")
    assert run("b", disturb=True) == first and len(first) == 2
    assert len({text for row in first for text in row}) > 1  # sampled, not one reply


@pytest.mark.slow
def test_the_ct2_conversion_is_cached_by_model_content(ct2_pair, tiny_dir, tmp_path):
    """A second load converts nothing; a changed model file is another cache entry."""
    import shutil

    _, _, cache = ct2_pair
    first = ct2_model(tiny_dir, cache)
    stamp = (first / "model.bin").stat().st_mtime_ns
    assert ct2_model(tiny_dir, cache) == first
    assert (first / "model.bin").stat().st_mtime_ns == stamp
    assert (first / "tokenizer" / "tokenizer_config.json").is_file()
    changed = tmp_path / "model"
    shutil.copytree(tiny_dir, changed)
    assert ct2_model(changed, cache) != first  # another path
    config = changed / "config.json"
    key = ct2_model(changed, cache)
    config.write_text(config.read_text().replace("}", ' , "note": "retrained"}', 1))
    assert ct2_model(changed, cache) != key  # same path, other content
    assert not list(cache.glob(".converting-*"))


# --- vLLM (a fake of its offline API) ------------------------------------------------------


@dataclass(kw_only=True)
class FakeSamplingParams:
    """vLLM's ``SamplingParams`` fields that matter here (a keyword it does not know is a
    TypeError, as msgspec's is)."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    stop_token_ids: list[int] | None = None
    max_tokens: int | None = 16
    logprobs: int | None = None
    skip_special_tokens: bool = True


@dataclass(kw_only=True)
class FakeBeamSearchParams:
    """vLLM's ``BeamSearchParams``."""

    beam_width: int
    max_tokens: int
    ignore_eos: bool = False
    temperature: float = 0.0
    length_penalty: float = 1.0
    include_stop_str_in_output: bool = False


@dataclass
class FakeCompletion:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: Any
    finish_reason: str | None


@dataclass
class FakeRequestOutput:
    outputs: list[FakeCompletion]


@dataclass
class FakeBeamSequence:
    tokens: list[int]
    logprobs: list = field(default_factory=list)
    cum_logprob: float = 0.0
    text: str | None = None
    finish_reason: str | None = None


@dataclass
class FakeBeamOutput:
    sequences: list[FakeBeamSequence]


SCRIPT = [("simp", -0.5, True), ("intro h", -1.5, True), ("omega omega", -0.2, False)]
"""What the fake model writes: text, log-probability, whether it stopped on EOS."""


class FakeLLM:
    """``vllm.LLM``'s offline API as leantrain uses it; checks the arguments it is given."""

    instances: ClassVar[list[FakeLLM]] = []

    def __init__(self, model: str, *, tokenizer: str | None = None, seed: int = 0, **kw: Any):
        from leantrain.llm.model_loading import load_tokenizer

        self.model, self.seed, self.calls = model, seed, []
        self.tok = load_tokenizer(model)
        FakeLLM.instances.append(self)

    def _check_prompts(self, prompts):
        assert isinstance(prompts, list)
        for p in prompts:
            assert set(p) == {"prompt_token_ids"} and all(
                isinstance(i, int) for i in p["prompt_token_ids"]
            )

    def generate(
        self,
        prompts,
        sampling_params=None,
        *,
        use_tqdm=True,
        lora_request=None,
        priority=None,
        tokenization_kwargs=None,
    ):
        assert isinstance(sampling_params, FakeSamplingParams)
        assert sampling_params.logprobs is not None  # else cumulative_logprob stays None
        self._check_prompts(prompts)
        self.calls.append(("generate", prompts, sampling_params))
        eos = self.tok.eos_token_id
        out = []
        for _ in prompts:
            rows = []
            for i in range(sampling_params.n):
                text, lp, stops = SCRIPT[i % len(SCRIPT)]
                ids = self.tok(text, add_special_tokens=False)["input_ids"]
                rows.append(
                    FakeCompletion(
                        i, text, ids + [eos] * stops, lp, None, "stop" if stops else "length"
                    )
                )
            out.append(FakeRequestOutput(rows))
        return out

    def beam_search(
        self, prompts, params, lora_request=None, use_tqdm=False, concurrency_limit=None
    ):
        assert isinstance(params, FakeBeamSearchParams)
        self._check_prompts(prompts)
        self.calls.append(("beam_search", prompts, params))
        eos = self.tok.eos_token_id
        out = []
        for p in prompts:
            seqs = []
            for text, lp, stops in SCRIPT[: params.beam_width]:
                ids = self.tok(text, add_special_tokens=False)["input_ids"] + [eos] * stops
                seqs.append(FakeBeamSequence(p["prompt_token_ids"] + ids, cum_logprob=lp))
            out.append(FakeBeamOutput(seqs))
        return out


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM
    module.SamplingParams = FakeSamplingParams
    module.BeamSearchParams = FakeBeamSearchParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    FakeLLM.instances = []
    return module


def _vllm(tiny_dir, fake_vllm, tmp_path, **options):
    return load_generator(
        "vllm",
        tiny_dir,
        cache_dir=tmp_path,
        device=None,
        compute_type="auto",
        seed=7,
        system_prompt=DEFAULT_SYSTEM_PROMPT,
        max_new_tokens=12,
        **options,
    )


def test_vllm_samples_n_k_with_log_probs_from_the_training_prompt(tiny_dir, fake_vllm, tmp_path):
    gen = _vllm(tiny_dir, fake_vllm, tmp_path, decoding="sample", temperature=0.7)
    [llm] = FakeLLM.instances
    assert llm.model == str(tiny_dir)  # a model directory is loaded as it is
    assert gen.propose([STATE, OTHER], 3) == [[("simp", -0.5), ("intro h", -1.5)]] * 2
    assert gen.unfinished == 2  # "omega omega" ran out of tokens, once per state
    [(kind, prompts, params)] = llm.calls
    assert kind == "generate"
    hf_prompt = HFGenerator(
        torch.nn.Linear(1, 1), gen.tokenizer, system_prompt=DEFAULT_SYSTEM_PROMPT
    ).prompt(STATE)
    assert (
        prompts[0]["prompt_token_ids"]
        == gen.tokenizer(hf_prompt, add_special_tokens=False)["input_ids"]
    )
    assert (params.n, params.max_tokens, params.temperature, params.top_p) == (3, 12, 0.7, 1.0)
    assert params.logprobs == 0 and params.stop_token_ids == [gen.tokenizer.eos_token_id]


def test_vllm_beam_search_and_the_mean_tactic_score(tiny_dir, fake_vllm, tmp_path):
    gen = _vllm(tiny_dir, fake_vllm, tmp_path, decoding="beam", tactic_score="mean")
    [row] = gen.propose([STATE], 3)
    [(kind, _, params)] = FakeLLM.instances[0].calls
    assert kind == "beam_search"
    assert (params.beam_width, params.max_tokens) == (3, 12)
    # per token: "simp" is 4 characters + EOS = 5 tokens, "intro h" 7 + EOS = 8
    assert row == [("simp", pytest.approx(-0.5 / 5)), ("intro h", pytest.approx(-1.5 / 8))]
    assert gen.unfinished == 1


def test_vllm_exports_a_non_directory_model_once(fake_vllm, tmp_path):
    gen = _vllm("tiny", fake_vllm, tmp_path / "cache")
    exported = FakeLLM.instances[0].model
    assert exported.startswith(str(tmp_path / "cache")) and isinstance(gen, VLLMGenerator)
    _vllm("tiny", fake_vllm, tmp_path / "cache")
    assert FakeLLM.instances[1].model == exported


def test_without_vllm_the_engine_is_one_line_naming_the_install(tiny_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ConfigError, match="pip install vllm"):
        load_generator(
            "vllm", tiny_dir, cache_dir=tmp_path, device=None, compute_type="auto", seed=None
        )


# --- the tactic score and the progress model in prove ------------------------------------------


class Scripted(ChatGenerator):
    def _complete(self, prompts, k):
        return [[Candidate("a", -2.0, "stop", 4), Candidate("b", -1.5, "stop", 1)] for _ in prompts]


def test_the_tactic_score_ranks_by_sum_or_per_token_mean():
    gen = Scripted(None, system_prompt=None)
    gen.prompt = lambda state, premises=None: state  # no tokenizer needed here
    assert gen.propose(["s"], 2) == [[("b", -1.5), ("a", -2.0)]]
    gen.tactic_score = "mean"
    assert gen.propose(["s"], 2) == [[("a", -0.5), ("b", -1.5)]]


def _prove(nat_basics, tmp_path, **kw):
    from prover_helpers import ScriptedGenerator

    return Prover(
        tactic_generator=ScriptedGenerator({}),
        lean_backend=ReplayBackend(),
        data=str(nat_basics),
        progress_bar=False,
        **kw,
    )


def test_a_mean_score_needs_a_generator_that_counts_tokens(nat_basics, tmp_path):
    with pytest.raises(ConfigError, match="tactic-score mean"):
        _prove(nat_basics, tmp_path, tactic_score="mean")


def test_length_normalize_is_refused_naming_depth_exponent_one(nat_basics, tmp_path):
    """``length_normalize`` (removed: a duplicate of ``depth_exponent`` 1) is one line giving
    the new spelling, from Python keywords and from the command line."""
    assert _prove(nat_basics, tmp_path, depth_exponent=2).settings.depth_exponent == 2.0
    with pytest.raises(ConfigError, match="'length_normalize' is now 'depth_exponent'") as e:
        _prove(nat_basics, tmp_path, length_normalize=True)
    assert "--depth-exponent 1" in str(e.value)
    with pytest.raises(ConfigError, match="'length_normalize' is now 'depth_exponent'"):
        parse(
            ProveArgs,
            ["--generator", "g", "--data", "d", "--output-dir", "o", "--length-normalize"],
        )


def test_leanprogress_model_alone_turns_progress_on_and_the_flag_wins(
    nat_basics, tmp_path, monkeypatch, caplog
):
    loaded = []
    monkeypatch.setattr(
        "leantrain.prover.prover.load_progress", lambda path, device: loaded.append(path) or path
    )
    caplog.set_level(logging.INFO, logger="leantrain.prover.prover")
    monkeypatch.delenv("LEANPROGRESS_MODEL", raising=False)
    assert _prove(nat_basics, tmp_path).progress is None and loaded == []
    monkeypatch.setenv("LEANPROGRESS_MODEL", "runs/env-progress")
    assert _prove(nat_basics, tmp_path).progress == "runs/env-progress"
    assert "$LEANPROGRESS_MODEL=runs/env-progress (no --progress given)" in caplog.text
    assert _prove(nat_basics, tmp_path, progress="runs/flag").progress == "runs/flag"
    assert "the flag wins over $LEANPROGRESS_MODEL" in caplog.text
    assert loaded == ["runs/env-progress", "runs/flag"]


# --- tuning the progress weight ------------------------------------------------------------


class TreeBackend:
    """Every theorem is the same tree: ``b`` (the generator's favourite) leads nowhere,
    ``a`` then ``qed`` proves it."""

    name = "replay"
    metric = "replay proof rate"

    def start(self, theorem):
        from leantrain.prover.backend import NO_GOALS
        from prover_helpers import TreeSession

        tree = {("root", "a"): "A", ("root", "b"): "B", ("B", "b2"): "B2", ("A", "qed"): NO_GOALS}
        return TreeSession("root", tree)


class Steps:
    """The progress model knows ``b`` is far from a proof."""

    def predict_many(self, goals, prefixes, tactics):
        return [5.0 if t.startswith("b") else 1.0 for t in tactics]


def test_the_weight_sweep_picks_the_weight_that_proves_more_and_writes_it(nat_basics, tmp_path):
    from leantrain.prover.tuning import tune_progress_weight, write_weight
    from prover_helpers import ScriptedGenerator

    script = {"root": [("b", -0.5), ("a", -1.0)], "A": [("qed", -0.1)], "B": [("b2", -0.1)]}
    result = tune_progress_weight(
        {"data": str(nat_basics), "split": "test", "max_expansions": 2},
        [0.0, 1.0, 10.0],
        tactic_generator=ScriptedGenerator(script),
        progress_model=Steps(),
        lean_backend=TreeBackend(),
    )
    by_weight = {r["progress_weight"]: r for r in result["table"]}
    assert by_weight[0.0]["proved"] == 0  # b first: the budget ends in B
    assert by_weight[1.0]["proved"] == by_weight[1.0]["attempted"] == 3
    assert result["best"] == 1.0  # 10 proves as much in as many expansions: the smaller wins
    config = tmp_path / "prove.yaml"
    config.write_text("k: 4\nprogress_weight: 0.3\n")
    write_weight(config, result["best"])
    from leantrain.core.config import config_from_yaml
    from leantrain.prover import ProverConfig

    loaded = config_from_yaml(ProverConfig, config)
    assert loaded.progress_weight == 1.0 and loaded.num_sampled_tactics == 4


def test_the_weight_sweep_needs_a_progress_model(nat_basics, monkeypatch):
    from leantrain.prover.tuning import tune_progress_weight
    from prover_helpers import ScriptedGenerator

    monkeypatch.delenv("LEANPROGRESS_MODEL", raising=False)
    with pytest.raises(ConfigError, match="needs a progress model"):
        tune_progress_weight(
            {"data": str(nat_basics), "split": "test"},
            [0.0],
            tactic_generator=ScriptedGenerator({}),
        )


def test_the_default_engine_cache_is_written_into_a_claimed_run_dir(monkeypatch, tmp_path):
    """``--engine ct2`` without ``--engine-cache`` converts into OUTPUT_DIR/engine-cache: the
    run directory is claimed first, so its results may follow (it was refused as "holds files
    leantrain did not write")."""
    from leantrain.prover import engines
    from leantrain.prover import prover as prover_module
    from leantrain.prover.prover_config import ProverConfig
    from leantrain.prover.results import ResultStore

    def fake_load(engine, name, *, cache_dir, **options):
        (cache_dir / "converted").mkdir(parents=True)
        return object()

    monkeypatch.setattr(engines, "load_generator", fake_load)
    out = tmp_path / "pk"
    cfg = ProverConfig(generator="tiny", engine="ct2", output_dir=str(out))
    prover_module.load_generator(cfg, None, None)
    assert (out / "engine-cache" / "converted").is_dir()
    ResultStore(str(out), cfg.tracked(), "replay proof rate", {}).open()  # the results follow
