"""Generation engines behind the generator protocol: ``--engine hf|ct2|vllm``.

Each asks the model exactly as :class:`~leantrain.prover.generator.HFGenerator` does (the
training chat template, rendered by the model's own tokenizer, tokenised without added special
tokens), returns the same :class:`~leantrain.prover.generator.Candidate` rows (the sum of the
token log-probabilities under the raw distribution, up to and including the end-of-turn token;
``stop`` or ``length``), and so shares deduplication, the tactic score and the dropping of
cut-off candidates (:class:`~leantrain.prover.generator.ChatGenerator`).

- ``ct2``: CTranslate2 (Lean Copilot's engine, CPU and GPU). The model (run / adapter / GGUF
  / hub id: loaded as ``hf`` loads it, a LoRA adapter merged) is converted once into a cache
  directory keyed by the model's files (path, sizes, modification times), so a changed model is
  converted again. Weights are stored in float32; ``ct2_compute_type`` chooses the compute type
  at load (``auto``: see :func:`ct2_compute_type`). Prompts of near token lengths are
  generated together (CTranslate2 forwards a prompt at once only up to the call's shortest
  one: :func:`_length_groups`), and each prompt is forwarded once for all k hypotheses. CTranslate2 returns a
  hypothesis' log-probability sum divided by ``len ** length_penalty``; the raw sum ``hf``
  gives is that score times ``len ** length_penalty`` (beam search keeps generate's length
  penalty 1.0 for its ranking; sampling uses 0, the raw sum). A sampling call stops each
  hypothesis at the generator's ``deadline`` (a ``generate_batch`` callback, as ``hf``'s
  ``max_time``; CTranslate2 takes one only at beam size 1, so beam search runs its call out).
- ``vllm``: vLLM's offline API (checked against vLLM's ``vllm/entrypoints/llm.py`` and
  ``vllm/beam_search.py`` at commit 10fdb8f, the 0.15 series): ``LLM.generate`` with
  ``SamplingParams(n=k, logprobs=0, …)`` for sampling (``cumulative_logprob``, raw log-probs:
  vLLM's default ``logprobs_mode`` is ``raw_logprobs``, before temperature) and
  ``LLM.beam_search`` with ``BeamSearchParams(beam_width=k, …)`` for beam search
  (``cum_logprob``; a sequence that ends in EOS finished, any other was cut off). Prompts go
  in as token ids (``{"prompt_token_ids": …}``), so vLLM neither re-renders nor re-tokenises
  them. vLLM is not a dependency of leantrain (it needs CUDA): install it on the GPU machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leantrain.core.errors import ConfigError
from leantrain.prover.generator import Candidate, ChatGenerator, HFGenerator, system_prompt_of

ENGINES = ("hf", "ct2", "vllm")
VLLM_INSTALL = "pip install vllm (on a CUDA machine; it is not a leantrain dependency)"


def _model_key(name: str | Path) -> str:
    """A key of model ``name``'s content: its resolved path and every file's relative name,
    size and modification time (a retrained or replaced model changes it); ``tiny`` and hub
    ids by name."""
    from leantrain.llm.model_loading import TINY_MODEL_NAME

    path = Path(str(name)).expanduser()
    parts: list[Any] = [str(name)]
    if str(name) != TINY_MODEL_NAME and path.exists():
        path = path.resolve()
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        parts = [str(path)] + [
            [str(f.relative_to(path.parent)), f.stat().st_size, f.stat().st_mtime_ns] for f in files
        ]
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.name or str(name))
    return f"{stem[:40]}-{digest}"


def _export_hf(name: str | Path, target: Path) -> Any:
    """Load ``name`` as the ``hf`` engine does (float32, a LoRA adapter merged) and save model
    and tokenizer into ``target``; the tokenizer."""
    import torch
    from leantrain.llm.model_loading import load_model_and_tokenizer

    model, tokenizer = load_model_and_tokenizer(name, dtype=torch.float32, trainable_adapter=False)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return tokenizer


def ct2_model(name: str | Path, cache_dir: str | Path) -> Path:
    """The CTranslate2 conversion of model ``name`` in ``cache_dir`` (converted now unless
    there: once per model content); its tokenizer is in ``tokenizer/`` beside it."""
    from leantrain.core.errors import require_package

    require_package(
        "ctranslate2", extra="ct2", dist="leantrain-prover", feature="--engine ct2 (CTranslate2)"
    )
    from ctranslate2.converters import TransformersConverter

    cache = Path(cache_dir).expanduser()
    target = cache / _model_key(name)
    if (target / "model.bin").is_file() and (target / "tokenizer").is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".converting-", dir=cache))
    try:
        tokenizer = _export_hf(name, work / "hf")
        out = work / "ct2"
        try:
            TransformersConverter(str(work / "hf")).convert(str(out), quantization=None)
        except (ValueError, NotImplementedError) as e:
            raise ConfigError(
                f"--engine ct2: CTranslate2 cannot convert {name}: {e}".split("\n")[0],
                hint="use --engine hf for this model",
            ) from None
        config = json.loads((out / "config.json").read_text(encoding="utf-8"))
        # CTranslate2 refuses a null BOS (the tiny tokenizer has none); prompts carry their own
        config["bos_token"] = config.get("bos_token") or config.get("eos_token")
        (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        tokenizer.save_pretrained(str(out / "tokenizer"))
        if not (target / "model.bin").is_file():  # else another process converted it first
            if target.exists():  # an incomplete conversion left by a killed run
                shutil.rmtree(target)
            os.replace(out, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
"""x86 CPU flags (``/proc/cpuinfo``) of instructions that sum 8-bit products in 32 bits."""


def cpu_int8_is_exact(cpuinfo: str | None = None, machine: str | None = None) -> bool:
    """Whether CTranslate2's int8 kernels add up exactly on this CPU: on x86 only with VNNI or
    AMX (``cpuinfo``: ``/proc/cpuinfo``'s text; without them oneDNN's u8s8 GEMM can saturate
    16-bit intermediate sums, see oneDNN's "Nuances of int8 computations"), on ARM always
    (its dot-product kernels accumulate in 32 bits). Unknown x86 (no ``/proc/cpuinfo``): no."""
    import platform

    machine = (machine or platform.machine()).lower()
    if machine not in {"x86_64", "amd64", "i386", "i686", "x86"}:
        return True
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    flags = {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.split()}
    return bool(flags & INT8_DOT_FLAGS)


def ct2_compute_type(compute_type: str, device: str) -> str:
    """``auto``: int8_float16 on CUDA; on CPU int8 (Lean Copilot's choice) where the CPU's int8
    arithmetic is exact (:func:`cpu_int8_is_exact`), else float32 (on an AVX2-only EPYC int8
    had ``hf``'s best candidate on 3 of 24 states, scores ~4 nats off, BENCHMARKS.md); else as
    given."""
    if compute_type != "auto":
        return compute_type
    if device != "cpu":
        return "int8_float16"
    return "int8" if cpu_int8_is_exact() else "float32"


class CT2Generator(ChatGenerator):
    """A tactic generator over a ``ctranslate2.Generator`` and the model's tokenizer (see the
    module docstring); :meth:`from_pretrained` converts (once) and loads."""

    def __init__(
        self,
        generator: Any,
        tokenizer: Any,
        *,
        reload: Callable[[], Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(tokenizer, **options)
        self.generator = generator
        self._reload = reload  # a fresh ctranslate2.Generator (see reseed)
        self._sampled = False  # since the last (re)load

    @classmethod
    def from_pretrained(
        cls,
        name: str | Path,
        *,
        cache_dir: str | Path,
        device: str | None = None,
        compute_type: str = "auto",
        seed: int | None = None,
        system_prompt: str | None = None,
        threads: int = 0,
        **options: Any,
    ) -> CT2Generator:
        """Convert ``name`` into ``cache_dir`` unless done, and load it on ``device`` (``cpu``,
        ``cuda`` or ``cuda:N``; default: cuda when available) at ``compute_type``, with
        ``threads`` CPU threads (0: CTranslate2's default)."""
        import ctranslate2
        from leantrain.llm.model_loading import load_tokenizer

        system_prompt = system_prompt_of(name, system_prompt)
        path = ct2_model(name, cache_dir)
        if device is None:
            device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
        kind, _, index = device.partition(":")

        def load() -> Any:
            return ctranslate2.Generator(
                str(path),
                device=kind,
                device_index=int(index or 0),
                compute_type=ct2_compute_type(compute_type, kind),
                intra_threads=threads,
            )

        if seed is not None:
            ctranslate2.set_random_seed(seed % 2**32)
        tokenizer = load_tokenizer(path / "tokenizer")
        return cls(load(), tokenizer, reload=load, system_prompt=system_prompt, **options)

    def reseed(self, seed: int) -> None:
        """Seed the sampling that follows from ``seed`` (the prover calls it per attempt and
        per whole-proof theorem, so a resumed run samples as an unbroken one). CTranslate2
        seeds a worker thread's random generator once, when the thread first samples
        (``random.cc``), so after sampling the model is loaded again, with new worker threads
        (~0.3 s for SmolLM2-135M at float32 on CPU)."""
        import ctranslate2

        ctranslate2.set_random_seed(seed % 2**32)  # CTranslate2 takes 32 bits
        if self._sampled and self._reload is not None:
            self.generator = None  # the old model's memory goes first
            self.generator = self._reload()
            self._sampled = False

    def _complete(self, prompts: list[str], k: int) -> list[list[Candidate]]:
        tok = self.tokenizer
        starts = [tok.convert_ids_to_tokens(self.prompt_ids(p)) for p in prompts]
        options: dict[str, Any] = {
            "max_length": self.max_new_tokens,
            "include_prompt_in_result": False,
            "return_end_token": True,
            "end_token": tok.eos_token,
            "num_hypotheses": k,
            "return_scores": True,
        }
        if self.decoding == "beam":
            options.update(beam_size=k, length_penalty=1.0)  # as generate's beam search ranks
        else:  # no length penalty: the scores are the raw sums
            self._sampled = True
            options.update(
                beam_size=1,
                length_penalty=0.0,
                sampling_topk=0,
                sampling_temperature=self.temperature,
            )
            if self.deadline is not None:  # each sample stops there, as hf's max_time stops it
                deadline = self.deadline  # (CTranslate2 takes a callback only when beam_size 1)
                options["callback"] = lambda step: time.monotonic() > deadline
        penalty = options["length_penalty"]
        out: list[list[Candidate]] = [[] for _ in prompts]
        eos = tok.eos_token_id
        for group in _length_groups(starts, self.batch_size):
            results = self.generator.generate_batch([starts[i] for i in group], **options)
            for i, result in zip(group, results):
                for ids, score in zip(result.sequences_ids, result.scores):
                    # CTranslate2 divides a hypothesis' sum by len ** length_penalty
                    logprob = float(score) * len(ids) ** penalty
                    text = tok.decode(ids, skip_special_tokens=True)
                    reason = "stop" if ids and ids[-1] == eos else "length"
                    out[i].append(Candidate(text, logprob, reason, len(ids)))
        return out


LENGTH_SPREAD = 16
"""The most tokens the prompts of one CTranslate2 call may differ in length (see
:func:`_length_groups`)."""


def _length_groups(
    starts: list[list[str]], size: int, spread: int = LENGTH_SPREAD
) -> list[list[int]]:
    """Indices of ``starts`` in calls of at most ``size`` prompts, shortest first, whose
    token lengths differ by at most ``spread``.

    CTranslate2 forwards a call's prompts at once only up to the shortest one; the rest of a
    longer prompt goes through the decoding loop token by token (its log-probabilities are not
    scored: the hypotheses and scores are the unbatched ones — measured on 24 LB4 states, and
    ``decoding.cc``'s ``update_sample_with_prefix``). Prompts of very different lengths would
    cost many such steps; prompts of near lengths share the decoding steps (on the LB4 states,
    k = 8 beams: 24 prompts in 7–11 calls took 0.85× the time of one call per prompt). One
    difference remains: at a longer prompt's first free step CTranslate2 refuses the
    end-of-turn token to the secondary beams (its issue #277) — an empty tactic, which the
    prover drops anyway."""
    order = sorted(range(len(starts)), key=lambda i: len(starts[i]))
    groups: list[list[int]] = []
    for i in order:
        current = groups[-1] if groups else None
        if (
            current is None
            or len(current) >= max(size, 1)
            or len(starts[i]) - len(starts[current[0]]) > spread
        ):
            groups.append([i])
        else:
            current.append(i)
    return groups


class VLLMGenerator(ChatGenerator):
    """A tactic generator over a ``vllm.LLM`` (see the module docstring); the tokenizer renders
    and tokenises the prompts as training did. :meth:`from_pretrained` needs vLLM installed."""

    def __init__(self, llm: Any, tokenizer: Any, *, seed: int | None = None, **options: Any):
        super().__init__(tokenizer, **options)
        self.llm, self.seed = llm, seed
        self.calls = 0

    @classmethod
    def from_pretrained(
        cls,
        name: str | Path,
        *,
        cache_dir: str | Path,
        seed: int | None = None,
        system_prompt: str | None = None,
        **options: Any,
    ) -> VLLMGenerator:
        """Load ``name`` into vLLM: a model directory as it is, anything else (a run, an
        adapter, a GGUF file, ``tiny``) saved first as a merged model into ``cache_dir``."""
        try:
            import vllm
        except ImportError:
            raise ConfigError(
                "--engine vllm needs vLLM, which is not installed",
                hint=f"{VLLM_INSTALL}; or --engine hf / ct2",
            ) from None
        from leantrain.llm.model_loading import load_tokenizer, resolve_model_path

        system_prompt = system_prompt_of(name, system_prompt)
        path = None if str(name) == "tiny" else resolve_model_path(name)
        if path is None or not (path / "config.json").is_file():
            path = Path(cache_dir).expanduser() / f"hf-{_model_key(name)}"
            if not (path / "config.json").is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                work = Path(tempfile.mkdtemp(prefix=".exporting-", dir=path.parent))
                _export_hf(name, work)
                os.replace(work, path)
        tokenizer = load_tokenizer(path)
        llm = vllm.LLM(model=str(path), tokenizer=str(path), seed=seed or 0)
        return cls(llm, tokenizer, seed=seed, system_prompt=system_prompt, **options)

    def reseed(self, seed: int) -> None:
        """Seed the next requests from ``seed`` (the prover calls it per attempt; the request
        seeds follow from it and the calls since, so a resumed run samples as an unbroken
        one)."""
        self.seed, self.calls = seed, 0

    def _complete(self, prompts: list[str], k: int) -> list[list[Candidate]]:
        from vllm import BeamSearchParams, SamplingParams

        ids = [self.prompt_ids(p) for p in prompts]
        requests = [{"prompt_token_ids": p} for p in ids]
        eos, decode = self.tokenizer.eos_token_id, self.tokenizer.decode
        self.calls += 1
        if self.decoding == "beam":
            params = BeamSearchParams(
                beam_width=k, max_tokens=self.max_new_tokens, length_penalty=1.0
            )
            out = []
            for prompt, result in zip(ids, self.llm.beam_search(requests, params)):
                row = []
                for seq in result.sequences:
                    new = list(seq.tokens[len(prompt) :])
                    reason = "stop" if new and new[-1] == eos else "length"
                    text = decode(new, skip_special_tokens=True)
                    row.append(Candidate(text, float(seq.cum_logprob), reason, len(new)))
                out.append(row)
            return out
        sampling = SamplingParams(
            n=k,
            temperature=self.temperature,
            top_p=1.0,
            max_tokens=self.max_new_tokens,
            logprobs=0,  # the sampled token's own log-prob: cumulative_logprob is filled
            stop_token_ids=[eos],
            seed=None if self.seed is None else self.seed + self.calls,
        )
        results = self.llm.generate(requests, sampling, use_tqdm=False)
        return [
            [
                _sampled(o.text, o.cumulative_logprob, o.finish_reason, list(o.token_ids), eos)
                for o in result.outputs
            ]
            for result in results
        ]


def _sampled(text: str, logprob: float, finish: str, tokens: list[int], eos: int) -> Candidate:
    """A vLLM completion as a candidate: ``stop`` when it stopped on EOS (whose log-prob
    ``cumulative_logprob`` holds; the token counts whether or not vLLM lists it)."""
    if finish != "stop":
        return Candidate(text, float(logprob), "length", len(tokens))
    return Candidate(text, float(logprob), "stop", len(tokens) + (tokens[-1:] != [eos]))


def load_generator(
    engine: str,
    name: str | Path,
    *,
    cache_dir: str | Path,
    device: str | None,
    compute_type: str,
    seed: int | None,
    **options: Any,
) -> ChatGenerator:
    """The ``engine``'s generator over model ``name`` (``options``: :class:`ChatGenerator`'s)."""
    if engine == "ct2":
        return CT2Generator.from_pretrained(
            name,
            cache_dir=cache_dir,
            device=device,
            compute_type=compute_type,
            seed=seed,
            **options,
        )
    if engine == "vllm":
        return VLLMGenerator.from_pretrained(name, cache_dir=cache_dir, seed=seed, **options)
    return HFGenerator.from_pretrained(name, device=device, **options)
