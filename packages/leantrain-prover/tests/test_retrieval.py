"""Retrieval-augmented prompts in the prover: the same prompt as the SFT dataset for the same
state and retriever, nothing changed without one, the generator's training retriever read from
its run (a mismatch is one line), bad retrievers refused before any model loads, and a
retrieval-trained generator proving end to end under the replay backend."""

from __future__ import annotations

import json

import pytest
from leantrain.core.cli import main
from leantrain.core.errors import ConfigError
from leantrain.prover import Prover
from leantrain.prover.generator import HFGenerator
from leantrain.tactics import (
    DEFAULT_SYSTEM_PROMPT,
    TacticDatasetConfig,
    create_rl_dataset,
    format_user_prompt,
)

SEARCH = {
    "num_sampled_tactics": 1,
    "max_new_tokens": 4,
    "max_expansions": 2,
    "progress_bar": False,
}


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    """A tiny (untrained, but fixed) premise retriever saved as leantrain saves one."""
    import torch
    from leantrain.retrieval import PremiseRetriever

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("ret") / "retriever"
    PremiseRetriever.from_name("tiny").save_pretrained(path)
    return path


@pytest.fixture
def prompts(monkeypatch):
    """Every prompt text HFGenerator renders, with the state it was for."""
    seen: list[tuple[str, str]] = []
    original = HFGenerator.prompt

    def recording(self, state, premises=None):
        text = original(self, state, premises)
        seen.append((state, text))
        return text

    monkeypatch.setattr(HFGenerator, "prompt", recording)
    return seen


def _model(path, retriever=None, **fields):
    """A generator directory (its config.json is never loaded here) whose prompt.json records
    ``fields`` and ``retriever``'s checkpoint, as a leantrain trainer saves one."""
    from leantrain.tactics.model_prompt import ModelPrompt, write_prompt
    from leantrain.tactics.premises import retriever_checkpoint

    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    if retriever is not None:
        ckpt = retriever_checkpoint(retriever)
        fields.update(retriever=ckpt.path, retriever_sha256=ckpt.sha256)
    write_prompt(path, ModelPrompt(**fields))
    return path


class PremiseGenerator:
    """A generator that takes premises and records them."""

    def __init__(self):
        self.premises = []

    def propose(self, states, k, premises=None):
        self.premises.append(premises)
        return [[] for _ in states]


def test_the_prompt_with_premises_is_the_sft_datasets(nat_basics, retriever, prompts, tmp_path):
    from leantrain.core.config import config_from_dict
    from leantrain.llm.sft_config import SFTConfig
    from leantrain.llm.training_data import load_sft_dataset

    # a budget that bites: 5 premises retrieved, about 2 fit
    rag = {"retriever": str(retriever), "num_premises": 5, "max_premise_chars": 200}
    sft_cfg = config_from_dict(SFTConfig, {**rag, "output_dir": str(tmp_path / "sft")})
    sft = load_sft_dataset(str(nat_basics), "test", sft_cfg)  # what `leantrain sft` trains on
    rl = create_rl_dataset(nat_basics, "test", config=TacticDatasetConfig(**rag))
    assert [r["prompt"] for r in sft] == [r["prompt"] for r in rl]
    by_state = {r["problem"]: r["prompt"] for r in rl}

    prover = Prover(generator="tiny", data=str(nat_basics), device="cpu", **rag, **SEARCH)
    prover.evaluate()
    tokenizer = prover.generator.tokenizer
    roots = [(s, text) for s, text in prompts if format_user_prompt(s) in by_state]
    assert len(roots) >= 3  # every theorem's first state at least
    for state, text in roots:
        messages = by_state[format_user_prompt(state)]
        assert messages[1]["content"].startswith("Premises:\n")
        expected = tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        assert text == expected  # the very string: same premises, order, budget, template
    shown = [
        by_state[format_user_prompt(s)][1]["content"].split("\n\nState:\n")[0].count("\n\n") + 1
        for s, _ in roots
    ]
    assert min(shown) >= 1 and max(shown) < 5  # the budget, not k, decided how many


def test_premises_are_accessible_from_the_theorem_only(nat_basics, retriever):
    """The premises of a NatBasics/Lemmas.lean theorem never come from a file it cannot see
    (Order.lean is not imported) nor from later in its own file."""
    from leantrain.retrieval import Corpus
    from leantrain.tactics import PremiseQuery, RetrievedPremises

    source = RetrievedPremises.load(retriever, nat_basics, 60, device="cpu")
    corpus = Corpus.from_export(nat_basics)
    allowed = {
        p.serialize()
        for p in (
            corpus.premises[i] for i in corpus.accessible_ids("NatBasics/Lemmas.lean", (19, 1))
        )
    }
    [got] = source.premises(
        [PremiseQuery("n : Nat\n⊢ n + 0 = n", "NatBasics/Lemmas.lean", (19, 1))]
    )
    assert got and set(got) <= allowed
    assert len(got) == len(allowed) < len(corpus)
    # the same ranking as leantrain-retrieval's own retrieve() (on a CPU: fp32 either way)
    model = source.retriever
    model.index_corpus(corpus)
    state = "n : Nat\n⊢ n + 0 = n"
    theirs = model.retrieve(state, "NatBasics/Lemmas.lean", 4, position=(19, 1))
    [ours] = RetrievedPremises(model, source.index, 4).premises(
        [PremiseQuery(state, "NatBasics/Lemmas.lean", (19, 1))]
    )
    assert ours == [p.serialize() for p, _ in theirs]


def test_without_a_retriever_the_prompt_is_unchanged(nat_basics, prompts):
    prover = Prover(generator="tiny", data=str(nat_basics), device="cpu", **SEARCH)
    assert prover.premise_source is None
    prover.evaluate()
    tokenizer = prover.generator.tokenizer
    assert prompts
    for state, text in prompts:
        assert "Premises:" not in text
        assert text == tokenizer.apply_chat_template(
            [
                {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
                {"role": "user", "content": format_user_prompt(state)},
            ],
            tokenize=False,
            add_generation_prompt=True,
        )


def _one_line_error(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_bad_retriever_is_one_line_before_any_model_loads(nat_basics, tmp_path, capsys):
    not_a_retriever = _model(tmp_path / "sft-model")
    for retriever, message in [
        (tmp_path / "missing", "no such directory"),
        (not_a_retriever, "not a premise retriever"),
    ]:
        code = main(
            [
                "prove",
                "--generator", str(tmp_path / "no-model"),  # loading it would fail otherwise
                "--retriever", str(retriever),
                "--data", str(nat_basics),
                "--output-dir", str(tmp_path / "o"),
            ]
        )  # fmt: skip
        line = _one_line_error(capsys.readouterr().err)
        assert code != 0 and "--retriever" in line and message in line
        assert not (tmp_path / "o").exists()


def test_the_training_retriever_comes_from_prompt_json_and_a_mismatch_is_one_line(
    nat_basics, retriever, tmp_path
):
    import shutil

    rag = {"num_premises": 3, "max_premise_chars": 400}
    ckpt = str(_model(tmp_path / "gen", retriever, **rag))
    gen = PremiseGenerator()
    prover = Prover(generator=ckpt, tactic_generator=gen, data=str(nat_basics), **SEARCH)
    assert (prover.premise_settings.retriever, prover.premise_settings.num_premises) == (
        str(retriever.resolve()),
        3,
    )
    prover.evaluate()
    assert gen.premises and all(p and all(len(x) <= 3 for x in p) for p in gen.premises)

    other = shutil.copytree(retriever, tmp_path / "other")  # other content: another retriever
    (other / "retriever.json").write_text((other / "retriever.json").read_text() + " ")
    for given, named in [
        ({"retriever": ""}, "retriever None"),
        ({"num_premises": 5}, "num_premises 5 (trained with 3)"),
        ({"max_premise_chars": 9}, "max_premise_chars 9 (trained with 400)"),
        ({"retriever": str(other)}, f"retriever {other.resolve()}"),
        ({"system_prompt": "Be long."}, "system_prompt 'Be long.'"),
    ]:
        with pytest.raises(ConfigError) as e:
            Prover(generator=ckpt, tactic_generator=gen, data=str(nat_basics), **given)
        line = e.value.one_line()
        assert "\n" not in line and named in line and "--prompt-override" in line
    # on purpose: no premises for a model trained with them
    prover = Prover(
        generator=ckpt,
        tactic_generator=gen,
        data=str(nat_basics),
        retriever="",
        prompt_override=True,
    )
    assert prover.premise_source is None
    # a model trained without a retriever is not asked with one
    plain = _model(tmp_path / "plain")
    with pytest.raises(ConfigError, match=r"retriever .* \(trained with None"):
        Prover(
            generator=str(plain),
            tactic_generator=gen,
            data=str(nat_basics),
            retriever=str(retriever),
            **rag,
        )


def test_a_generator_without_premises_is_refused_with_a_retriever(nat_basics, retriever):
    class Plain:
        def propose(self, states, k):
            return [[] for _ in states]

    with pytest.raises(ConfigError, match="takes no premises"):
        Prover(tactic_generator=Plain(), data=str(nat_basics), retriever=str(retriever))


@pytest.mark.slow
def test_a_generator_trained_with_a_retriever_proves_with_it_end_to_end(
    nat_basics, retriever, tmp_path, capsys
):
    """`leantrain sft --retriever` records the retriever checkpoint in the model's prompt.json;
    `leantrain prove` reads it and asks with the same premises, under the replay backend."""
    import torch
    from leantrain.core.manifest import RunManifest
    from leantrain.llm import SFTTrainer

    torch.set_num_threads(1)
    run = tmp_path / "sft"
    SFTTrainer(
        model_name="tiny",
        output_dir=run,
        max_steps=2,
        batch_size=6,
        logging_steps=1,
        save_steps=1000,
        train_split="test",
        allow_contamination=True,  # trains on the theorems it proves, on purpose
        eval_k=1,
        max_eval_samples=1,
        retriever=str(retriever),
        num_premises=3,
        max_premise_chars=400,
    ).train(nat_basics)
    recorded = RunManifest.load(run).config["sft"]
    assert (recorded["retriever"], recorded["num_premises"]) == (str(retriever), 3)
    code = main(
        [
            "prove", "--generator", str(run), "--data", str(nat_basics),
            "--output-dir", str(tmp_path / "proofs"), "--k", "2", "--max-expansions", "3",
            "--max-new-tokens", "8", "--progress-bar", "false", "--device", "cpu",
        ]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert summary["metric"] == "replay proof rate" and summary["attempted"] == 3
    rows = [json.loads(x) for x in (tmp_path / "proofs" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(r["expansions"] >= 1 for r in rows)
    # the model records the checkpoint it trained with; the results say which one they used
    from leantrain.llm.model_loading import resolve_model_path
    from leantrain.tactics.model_prompt import read_prompt

    prompt = read_prompt(resolve_model_path(run))
    assert prompt.retriever == str(retriever.resolve())
    saved = json.loads((tmp_path / "proofs" / "prover_config.json").read_text())
    assert (saved["retriever_checkpoint"], saved["retriever_sha256"]) == (
        prompt.retriever,
        prompt.retriever_sha256,
    )
    assert (saved["num_premises"], saved["max_premise_chars"]) == (3, 400)
    # another retriever than the training one: refused in one line
    code = main(
        [
            "prove", "--generator", str(run), "--data", str(nat_basics),
            "--output-dir", str(tmp_path / "p2"), "--retriever", str(tmp_path),
        ]
    )  # fmt: skip
    assert code != 0 and "not a premise retriever" in _one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize("flag", ["--num-premises", "--max-premise-chars"])
def test_a_prompt_flag_given_at_its_default_is_compared_with_prompt_json(
    flag, nat_basics, retriever, tmp_path, capsys
):
    """A flag given on the command line is given even at the field's default (core's
    ``given()``): it differs from the model's prompt.json, so it is refused in one line."""
    from leantrain.tactics.prompts import DEFAULT_MAX_PREMISE_CHARS

    ckpt = _model(tmp_path / "gen", retriever, num_premises=3, max_premise_chars=400)
    value = {"--num-premises": 10, "--max-premise-chars": DEFAULT_MAX_PREMISE_CHARS}[flag]
    code = main(
        [
            "prove", "--generator", str(ckpt), "--data", str(nat_basics),
            "--output-dir", str(tmp_path / "o"), flag, str(value),
        ]
    )  # fmt: skip
    line = _one_line_error(capsys.readouterr().err)
    assert code != 0 and f"{flag[2:].replace('-', '_')} {value} (trained with" in line
    assert "--prompt-override" in line and not (tmp_path / "o").exists()
