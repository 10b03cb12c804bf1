"""The HF generator: the training prompt, exact per-tactic log-probabilities, batching."""

from __future__ import annotations

import time

import pytest
import torch
from leantrain.prover.generator import HFGenerator
from leantrain.tactics import DEFAULT_SYSTEM_PROMPT, build_messages

STATE = "n : ℕ\n⊢ n + 0 = n"
OTHER = "p q : Prop\nhp : p\n⊢ p ∨ q"


@pytest.fixture(scope="module")
def tiny():
    """The tiny model with its EOS made likely enough that candidates finish (an unfinished
    candidate is dropped, see test_a_tactic_cut_off_at_max_new_tokens_never_reaches_lean)."""
    return _eos_biased(3, 3.0)


def _generator(tiny, **kw):
    model, tokenizer = tiny
    return HFGenerator(
        model, tokenizer, system_prompt=DEFAULT_SYSTEM_PROMPT, max_new_tokens=8, **kw
    )


def test_the_prompt_is_the_one_trl_trains_on(tiny, tmp_path):
    """TRL's SFTTrainer tokenises a prompt/completion row; its prompt tokens are our prompt."""
    import datasets
    import trl

    model, tokenizer = tiny
    rows = datasets.Dataset.from_list(
        [
            {
                "prompt": build_messages(STATE),
                "completion": [{"role": "assistant", "content": "simp"}],
            }
        ]
    )
    args = trl.SFTConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True)
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=rows, processing_class=tokenizer)
    row = trainer.train_dataset[0]
    first = next(i for i, label in enumerate(row["labels"]) if label != -100)
    ours = tokenizer(_generator(tiny).prompt(STATE), add_special_tokens=False)["input_ids"]
    assert row["input_ids"][:first] == ours  # the tokens without loss are exactly our prompt
    completion = tokenizer.decode(row["input_ids"][first:])
    assert completion.startswith("simp" + tokenizer.eos_token)  # what the model learns to write


def _manual_logprob(model, tokenizer, prompt: str, completion: list[int]) -> float:
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    full = torch.tensor([ids + completion])
    with torch.no_grad():
        logp = torch.log_softmax(model(full).logits[0].float(), dim=-1)
    return sum(float(logp[len(ids) - 1 + j, t]) for j, t in enumerate(completion))


def _forward_pass_scores(model, eos: int, prompt_ids, prompt_mask, completion) -> list[float]:
    """The reference (how the generator scored before, with one extra forward pass): each row's
    log-probability of its completion, up to and including the first EOS, under the model's raw
    distribution; ``prompt_ids`` / ``prompt_mask`` are left-padded, one row per completion."""
    is_eos = completion == eos
    # tokens after the first EOS are padding: cumulative count of EOS before each position
    before = torch.cumsum(is_eos.int(), dim=1) - is_eos.int()
    keep = before == 0
    mask = torch.cat([prompt_mask, keep.to(prompt_mask.dtype)], dim=1)
    positions = (torch.cumsum(mask, dim=1) - 1).clamp(min=0)
    seqs = torch.cat([prompt_ids, completion], dim=1)
    with torch.no_grad():
        logits = model(input_ids=seqs, attention_mask=mask, position_ids=positions).logits
    start = prompt_mask.shape[1]
    logp = torch.log_softmax(logits[:, start - 1 : -1].float(), dim=-1)
    token_logp = logp.gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    return (token_logp * keep).sum(dim=1).tolist()


def _left_padded(tokenizer, prompts):
    tokenizer.padding_side = "left"
    try:
        return tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    finally:
        tokenizer.padding_side = "right"


def test_the_reference_scores_are_exact_and_stop_at_the_first_eos(tiny):
    """Left-padded prompts, completions padded after their EOS: each reference score is the
    model's log-probability of the completion up to and including EOS (or of all of it,
    without)."""
    model, tokenizer = tiny
    gen = _generator(tiny)
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    simp = tokenizer("simp", add_special_tokens=False)["input_ids"]
    intro = tokenizer("intro h", add_special_tokens=False)["input_ids"]
    completions = [[*simp, eos, pad, pad], intro]  # the second never stopped
    enc = _left_padded(tokenizer, [gen.prompt(STATE), gen.prompt(OTHER)])
    completion = torch.tensor(completions)
    scores = _forward_pass_scores(model, eos, enc["input_ids"], enc["attention_mask"], completion)
    assert scores[0] == pytest.approx(
        _manual_logprob(model, tokenizer, gen.prompt(STATE), [*simp, eos]), abs=1e-4
    )
    assert scores[1] == pytest.approx(
        _manual_logprob(model, tokenizer, gen.prompt(OTHER), intro), abs=1e-4
    )


def _eos_biased(seed: int, bias: float):
    """The tiny model with ``bias`` added to the EOS logit, so that some candidates stop early
    and others run to ``max_new_tokens``."""
    from leantrain.llm import build_tiny_model

    model, tokenizer = build_tiny_model(seed=seed)
    head = torch.nn.Linear(model.lm_head.in_features, model.lm_head.out_features, bias=True)
    with torch.no_grad():
        head.weight.copy_(model.lm_head.weight)
        head.bias.zero_()
        head.bias[tokenizer.eos_token_id] = bias
    model.lm_head = head
    return model, tokenizer


@pytest.mark.parametrize(
    ("decoding", "bias", "processors"),
    [("beam", 0.5, False), ("sample", 5.0, False), ("beam", 1.5, True), ("sample", 5.0, True)],
)
def test_scores_from_generate_are_the_forward_pass_scores(decoding, bias, processors):
    """The log-probabilities recorded during ``generate`` (no second forward pass) are those a
    forward pass over prompt + completion gives: raw distribution (not at the sampling
    temperature, not after a logits processor such as the model's repetition penalty), summed
    up to and including the first EOS, for a candidate that stops early and one that runs to
    ``max_new_tokens``; beam search's reordered beams are followed."""
    model, tokenizer = _eos_biased(3, bias)
    if processors:
        model.generation_config.repetition_penalty = 1.3
    max_new, k, eos = 8, 4, tokenizer.eos_token_id
    gen = HFGenerator(
        model,
        tokenizer,
        system_prompt=DEFAULT_SYSTEM_PROMPT,
        decoding=decoding,
        temperature=1.5,
        max_new_tokens=max_new,
    )
    prompts = [gen.prompt(STATE), gen.prompt(OTHER)]  # of different lengths: left padding
    torch.manual_seed(0)
    tokenizer.padding_side = "left"
    try:
        completion, scores = gen._generate(prompts, k)
    finally:
        tokenizer.padding_side = "right"
    enc = _left_padded(tokenizer, prompts)
    reference = _forward_pass_scores(
        model,
        eos,
        enc["input_ids"].repeat_interleave(k, dim=0),
        enc["attention_mask"].repeat_interleave(k, dim=0),
        completion,
    )
    rows = completion.tolist()
    stops = [row.index(eos) + 1 if eos in row else None for row in rows]
    assert any(s is not None and s < max_new for s in stops)  # one stopped early
    assert any(s is None and len(row) == max_new for s, row in zip(stops, rows))  # one ran out
    assert len(scores) == 2 * k
    assert max(abs(a - b) for a, b in zip(scores, reference)) < 1e-4


def test_scores_under_a_lora_adapter(tiny):
    """A PEFT model generates through its base model: the scores are still recorded there."""
    import peft

    model, tokenizer = _eos_biased(3, 0.5)
    lora = peft.LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    model = peft.get_peft_model(model, lora)
    gen = HFGenerator(model, tokenizer, system_prompt=DEFAULT_SYSTEM_PROMPT, max_new_tokens=6)
    tokenizer.padding_side = "left"
    try:
        completion, scores = gen._generate([gen.prompt(STATE)], 3)
    finally:
        tokenizer.padding_side = "right"
    enc = _left_padded(tokenizer, [gen.prompt(STATE)])
    ids, mask = (enc[key].repeat_interleave(3, dim=0) for key in ("input_ids", "attention_mask"))
    reference = _forward_pass_scores(model, tokenizer.eos_token_id, ids, mask, completion)
    assert scores == pytest.approx(reference, abs=1e-4)


def test_candidates_are_distinct_and_sorted(tiny):
    [cands] = _generator(tiny).propose([STATE], 4)
    assert 1 <= len(cands) <= 4
    assert len({t for t, _ in cands}) == len(cands) and all(t.strip() == t for t, _ in cands)
    assert [lp for _, lp in cands] == sorted((lp for _, lp in cands), reverse=True)


def test_a_tactic_cut_off_at_max_new_tokens_never_reaches_lean(tiny):
    """Each candidate has its finish reason: ``stop`` with the end-of-turn token, ``length``
    when cut off. ``propose`` (what the search runs) drops the cut-off ones and counts them."""
    model, tokenizer = _eos_biased(3, -20.0)  # never writes EOS: every candidate is cut off
    gen = HFGenerator(model, tokenizer, system_prompt=DEFAULT_SYSTEM_PROMPT, max_new_tokens=4)
    [cands] = gen.candidates([STATE], 3)
    assert cands and {reason for _, _, reason in cands} == {"length"}
    assert gen.propose([STATE], 3) == [[]]
    assert gen.unfinished == len(cands)
    finishing = _generator(tiny)
    [cands] = finishing.candidates([STATE], 4)
    reasons = {reason for _, _, reason in cands}
    assert "stop" in reasons
    [kept] = finishing.propose([STATE], 4)
    assert kept == [(t, lp) for t, lp, reason in cands if reason == "stop"]
    assert finishing.unfinished == sum(reason == "length" for _, _, reason in cands)


def test_a_batch_of_states_gives_what_each_state_gives_alone(tiny):
    gen = _generator(tiny)
    together = gen.propose([STATE, OTHER], 3)
    alone = [gen.propose([STATE], 3)[0], gen.propose([OTHER], 3)[0]]
    for a, b in zip(together, alone):
        assert [t for t, _ in a] == [t for t, _ in b]
        assert [lp for _, lp in a] == pytest.approx([lp for _, lp in b], abs=1e-3)


def test_sampling_returns_scored_candidates():
    torch.manual_seed(0)
    [cands] = _generator(_eos_biased(3, 5.0), decoding="sample").propose([STATE], 3)
    assert cands and all(lp < 0 for _, lp in cands)


def test_the_system_prompt_comes_from_the_models_prompt_json(tmp_path):
    """The saved model's prompt.json gives the system prompt ("" too: no system message);
    a model without one gets leantrain's default; one given explicitly wins (the prover
    checks it against prompt.json before it gets here)."""
    from leantrain.llm.tiny_model import save_tiny_model
    from leantrain.tactics.model_prompt import ModelPrompt, write_prompt

    path = save_tiny_model(tmp_path / "m")
    load = {"device": "cpu"}
    assert HFGenerator.from_pretrained(path, **load).system_prompt == DEFAULT_SYSTEM_PROMPT
    for recorded in ("Be brief.", ""):
        write_prompt(path, ModelPrompt(system_prompt=recorded))
        assert HFGenerator.from_pretrained(path, **load).system_prompt == recorded
    assert HFGenerator.from_pretrained(path, system_prompt="Hi.", **load).system_prompt == "Hi."


def test_generation_stops_at_the_deadline(tiny):
    """With ``deadline`` set (the prover sets it from the theorem's timeout), each ``generate``
    call gets the time left as ``max_time``: a deadline already past stops at once, so a slow
    expansion cannot run far past the timeout; without one nothing is bounded."""
    gen = _generator(tiny)
    seen = []
    generate = gen.model.generate

    def spy(*args, **kwargs):
        seen.append(kwargs.get("max_time"))
        return generate(*args, **kwargs)

    gen.model.generate = spy
    try:
        gen.propose([STATE], 2)
        gen.deadline = time.monotonic() + 100.0
        gen.propose([STATE], 2)
        gen.deadline = time.monotonic() - 5.0
        gen.propose([STATE], 2)
    finally:
        del gen.model.generate
    assert seen[0] is None
    assert 90.0 < seen[1] <= 100.0
    assert seen[2] == 0.0


def test_tokens_generated_are_counted_per_state_up_to_the_end_of_turn(tiny):
    """The budget ledger's ``tokens_generated``: each candidate's tokens up to and including
    its EOS (the padding after it is no work), per state of a call and in all."""
    gen = _generator(tiny, batch_size=1)  # one state per generate: no padding between states
    gen.propose([STATE], 3)
    alone = gen.last_tokens
    assert len(alone) == 1 and gen.tokens_generated == alone[0]
    assert 3 <= alone[0] <= 3 * 8  # k candidates of 1 … max_new_tokens tokens
    gen.propose([STATE, OTHER], 3)
    assert len(gen.last_tokens) == 2 and gen.last_tokens[0] == alone[0]
    assert gen.tokens_generated == alone[0] + sum(gen.last_tokens)
