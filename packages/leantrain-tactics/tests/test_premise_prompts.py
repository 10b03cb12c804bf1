"""Retrieval-augmented prompts: the premise block, its budget, the dataset option, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from leantrain.core.config import config_from_dict
from leantrain.core.errors import ConfigError, DataError
from leantrain.tactics import (
    DEFAULT_SYSTEM_PROMPT,
    PremiseQuery,
    TacticDatasetConfig,
    build_messages,
    create_rl_dataset,
    create_sft_dataset,
)
from leantrain.tactics.premises import check_retriever, corpus_dir

STATE = "a b : Nat\n⊢ <a>a</a> + b = b + a\n"


def test_prompt_without_premises_is_todays_prompt_byte_for_byte():
    # the prompt every model trained before premises existed was taught with: it must not move
    expected = [
        {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": "a b : Nat\n⊢ a + b = b + a"},
    ]
    assert build_messages(STATE) == expected
    assert build_messages(STATE, DEFAULT_SYSTEM_PROMPT, None) == expected
    assert build_messages(STATE, DEFAULT_SYSTEM_PROMPT, []) == expected
    assert build_messages(STATE, DEFAULT_SYSTEM_PROMPT, ["  ", ""]) == expected
    assert build_messages(STATE, None) == expected[1:]
    assert DEFAULT_SYSTEM_PROMPT.startswith("You are a Lean 4 theorem prover. Given the current")


def test_premise_block_is_fixed_and_leads_the_state():
    messages = build_messages(STATE, "sys", ["theorem Nat.add_comm : a + b = b + a", " lemma x\n"])
    assert messages[0] == {"role": "system", "content": "sys"}
    assert messages[1]["content"] == (
        "Premises:\ntheorem Nat.add_comm : a + b = b + a\n\nlemma x\n\n"
        "State:\na b : Nat\n⊢ a + b = b + a"
    )


def test_premise_budget_skips_what_does_not_fit_and_tries_the_next():
    long, short1, short2 = "L" * 50, "s" * 10, "t" * 10
    content = build_messages("⊢ True", None, [short1, long, short2], max_premise_chars=25)
    assert content[0]["content"] == f"Premises:\n{short1}\n\n{short2}\n\nState:\n⊢ True"
    # nothing fits: the premise-free prompt, not an empty block
    assert build_messages("⊢ True", None, [long], max_premise_chars=25) == build_messages(
        "⊢ True", None
    )


class FakeSource:
    """Premises named after the query, and the queries it was asked."""

    def __init__(self) -> None:
        self.queries: list[PremiseQuery] = []

    def premises(self, queries):
        self.queries += list(queries)
        return [[f"premise of {q.state.splitlines()[-1]}", "theorem two"] for q in queries]


def test_datasets_put_the_sources_premises_in_every_prompt(theorems):
    source = FakeSource()
    cfg = TacticDatasetConfig(max_premise_chars=1000)
    sft = create_sft_dataset(theorems, config=cfg, premise_source=source)
    rl = create_rl_dataset(theorems, config=cfg, premise_source=FakeSource())
    assert len(sft) == len(rl) == 5
    for sft_row, rl_row in zip(sft, rl):
        assert sft_row["prompt"] == rl_row["prompt"]
        state = rl_row["problem"]
        assert sft_row["prompt"] == build_messages(
            state, DEFAULT_SYSTEM_PROMPT, [f"premise of {state.splitlines()[-1]}", "theorem two"]
        )
    # queried with the state as the prompt shows it, the theorem's file and start
    q = source.queries[-1]
    assert q == PremiseQuery("n : Nat\n⊢ n ≤ n", "Demo.lean", (1, 1))
    # without a retriever nothing changes
    plain = create_sft_dataset(theorems)
    assert [r["prompt"] for r in plain] == [
        build_messages(r["problem"]) for r in create_rl_dataset(theorems)
    ]


def test_retrieval_is_batched(theorems, monkeypatch):
    from leantrain.tactics.tactic_dataset import TacticDataset

    monkeypatch.setattr(TacticDataset, "RETRIEVAL_BATCH", 3)
    calls: list[int] = []

    class Counting(FakeSource):
        def premises(self, queries):
            calls.append(len(queries))
            return super().premises(queries)

    create_sft_dataset(theorems, premise_source=Counting())
    assert calls == [3, 2]


def test_config_fields_and_bad_values():
    cfg = config_from_dict(
        TacticDatasetConfig, {"retriever": "runs/ret", "num_premises": 5, "max_premise_chars": 99}
    )
    assert (cfg.retriever, cfg.num_premises, cfg.max_premise_chars) == ("runs/ret", 5, 99)
    assert TacticDatasetConfig(retriever="").retriever is None
    for bad in ({"num_premises": 0}, {"max_premise_chars": 0}):
        with pytest.raises(ConfigError) as e:
            TacticDatasetConfig(**bad)
        assert "\n" not in e.value.one_line() and next(iter(bad)) in e.value.one_line()


def test_bad_retriever_is_one_line_before_anything_loads(export_dir: Path, tmp_path: Path):
    with pytest.raises(ConfigError) as e:
        check_retriever(tmp_path / "nope")
    line = e.value.one_line()
    assert "--retriever" in line and "no such directory" in line and "\n" not in line
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="not a premise retriever"):
        check_retriever(tmp_path / "model", flag="retriever")
    (tmp_path / "model" / "retriever.json").write_text("{}")
    assert check_retriever(tmp_path / "model") == tmp_path / "model"
    # the dataset refuses before it reads a retriever
    with pytest.raises(ConfigError, match="no such directory"):
        create_sft_dataset(export_dir, config=TacticDatasetConfig(retriever=str(tmp_path / "x")))


def test_retriever_needs_an_export_dir(theorems, tmp_path: Path):
    with pytest.raises(ConfigError, match="export dir"):
        create_sft_dataset(theorems, config=TacticDatasetConfig(retriever=str(tmp_path)))
    split = tmp_path / "t.json"
    split.write_text(json.dumps(theorems))
    with pytest.raises(DataError, match=r"corpus\.jsonl"):
        corpus_dir(split)


def test_corpus_dir_of_export_split_dir_and_split_file(tmp_path: Path):
    (tmp_path / "random").mkdir()
    (tmp_path / "random" / "train.json").write_text("[]")
    (tmp_path / "corpus.jsonl").write_text("")
    for data in (tmp_path, tmp_path / "random", tmp_path / "random" / "train.json"):
        assert corpus_dir(data) == tmp_path
