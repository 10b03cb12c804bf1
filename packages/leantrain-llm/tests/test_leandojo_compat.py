"""LeanDojo-v2 trainer code runs as written: ``GRPOTrainer(reward_func=…)`` with a reward on
strings returning a tensor, ``LeanGitRepo``-like repos, a ``DynamicDatabase``-like database,
LeanDojo-v2's positional order, and its first-line-of-a-tactic behaviour as one setting."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from leantrain.core.sample import sample_repo_dirs
from leantrain.llm import GRPOTrainer, SFTTrainer

TAUGHT = [("n : ℕ\n⊢ n + 0 = n", "simp"), ("p q : Prop\nhp : p\n⊢ p ∨ q", "exact Or.inl hp")]


class DynamicDatabaseLike:
    """Receives the repository objects themselves, as LeanDojo-v2's DynamicDatabase does."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def export_merged_data(self, repos, path):
        self.calls.append([f"{r.url}@{r.commit}" for r in repos])
        rows = [
            {
                "url": repo.url,
                "commit": repo.commit,
                "file_path": "T.lean",
                "full_name": f"t{i}",
                "start": [i, 1],
                "end": [i, 9],
                "traced_tactics": [{"tactic": t, "state_before": s, "state_after": "no goals"}],
            }
            for repo in repos
            for i, (s, t) in enumerate(TAUGHT)
        ]
        for strategy in ("random", "novel_premises"):
            (Path(path) / strategy).mkdir(parents=True)
            for split in ("train", "val", "test"):
                (Path(path) / strategy / f"{split}.json").write_text(json.dumps(rows))


@pytest.mark.slow
def test_the_issue_snippet_scores_tactic_strings(tmp_path):
    seen: list[type] = []

    def reward_func(completions, **kwargs):  # LeanDojo-v2's documented signature
        seen.extend(type(c) for c in completions)
        return torch.tensor([0.0 if "sorry" in c else 1.0 for c in completions])

    repos = [SimpleNamespace(url="https://github.com/x/lean4-example", commit="0" * 40)]
    database = DynamicDatabaseLike()
    result = GRPOTrainer(
        model_name="tiny",
        reward_func=reward_func,
        output_dir=tmp_path / "runs" / "g",
        max_steps=1,
        max_completion_length=4,
        evaluate_each_repo=False,
        allow_contamination=True,  # the fake database writes one theorem set to every split
    ).train(repos, database, tmp_path / "data")
    assert database.calls == [["https://github.com/x/lean4-example@" + "0" * 40]]
    assert seen and set(seen) == {str}
    assert result["final"]["global_step"] == 1 and result["final"]["mean_reward"] == 1.0
    assert (Path(result["model_dir"]) / "config.json").is_file()


def test_leandojo_positional_order_puts_the_reward_second(tmp_path):
    def reward_func(completions, **kwargs):
        return [1.0] * len(completions)

    trainer = GRPOTrainer("tiny", reward_func, str(tmp_path / "g"), 2, 4, 3e-5)
    cfg = trainer.config
    assert cfg.output_dir == str(tmp_path / "g") and cfg.num_train_epochs == 2
    assert cfg.per_device_train_batch_size == 4 and cfg.learning_rate == 3e-5
    assert [f.__name__ for f in trainer._reward_funcs] == ["reward_func"]


def test_first_line_only_reproduces_leandojo_tactics():
    data = next(d for d in sample_repo_dirs() if d.name == "list-basics")
    whole = SFTTrainer(model_name="tiny")._dataset(data)
    first = SFTTrainer(model_name="tiny", first_line_only=True)._dataset(data)
    tactics = [r["completion"][0]["content"] for r in whole]
    assert any("\n" in t for t in tactics)  # the sample has multi-line tactics
    assert [r["completion"][0]["content"] for r in first] == [t.splitlines()[0] for t in tactics]
