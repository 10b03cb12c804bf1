"""A saved generator carries its prompt (``prompt.json``): the checkpoint directory of a
``leantrain sft`` run, copied alone (the run deleted), is proved with (``leantrain prove``,
replay backend) and evaluated (``leantrain llm eval``) with the system prompt and premise
settings it was trained with. A malformed ``prompt.json``, a missing or changed retriever is
one line; an explicit setting that differs is refused by the prover unless
``--prompt-override``, and warned about (then used) by ``llm eval``."""

from __future__ import annotations

import json
import shutil

import pytest
from leantrain.core.cli import main
from leantrain.prover.generator import HFGenerator
from leantrain.tactics.model_prompt import PROMPT_NAME, ModelPrompt, read_prompt, write_prompt

SYSTEM = "Prove it, in one Lean tactic."
"""A system prompt other than leantrain's default."""

SEARCH = ["--k", "2", "--max-expansions", "2", "--max-new-tokens", "8", "--progress-bar", "false"]


def _tiny_retriever(path):
    import torch
    from leantrain.retrieval import PremiseRetriever

    torch.manual_seed(0)
    PremiseRetriever.from_name("tiny").save_pretrained(path)
    return path


def _lines(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.strip()]


def _one_line_error(capsys) -> str:
    lines = _lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.fixture
def seen(monkeypatch):
    """The prompts ``prove`` renders and the (messages, reference) pairs ``llm eval`` scores."""
    import leantrain.llm.evaluation as evaluation

    got: dict[str, list] = {"prove": [], "eval": []}
    prompt, pairs = HFGenerator.prompt, evaluation.evaluate_pairs

    def recording_prompt(self, state, premises=None):
        text = prompt(self, state, premises)
        got["prove"].append(text)
        return text

    def recording_pairs(model, tokenizer, items, **kw):
        got["eval"] += list(items)
        return pairs(model, tokenizer, items, **kw)

    monkeypatch.setattr(HFGenerator, "prompt", recording_prompt)
    monkeypatch.setattr(evaluation, "evaluate_pairs", recording_pairs)
    return got


@pytest.mark.slow
def test_a_checkpoint_copied_alone_is_proved_and_evaluated_with_its_prompt(
    nat_basics, tmp_path, capsys, caplog, seen
):
    import torch
    from leantrain.llm import SFTTrainer

    torch.set_num_threads(1)
    retriever = _tiny_retriever(tmp_path / "ret")
    run = tmp_path / "runs" / "sft"
    SFTTrainer(
        model_name="tiny",
        output_dir=run,
        max_steps=2,
        batch_size=6,
        logging_steps=1,
        save_steps=1000,
        train_split="test",
        allow_contamination=True,  # trains on the theorems it proves, on purpose
        evaluate_each_repo=False,
        system_prompt=SYSTEM,
        retriever=str(retriever),
        num_premises=3,
        max_premise_chars=400,
    ).train(nat_basics)
    [saved] = (run / "sft").glob("000-*")
    ckpt = tmp_path / "ckpt-only"
    shutil.copytree(saved, ckpt)  # cp -r runs/sft/sft/000-* ckpt-only
    shutil.rmtree(tmp_path / "runs")  # nothing else of the run is left
    prompt = read_prompt(ckpt)
    assert prompt is not None
    assert (prompt.system_prompt, prompt.retriever) == (SYSTEM, str(retriever.resolve()))
    assert (prompt.num_premises, prompt.max_premise_chars) == (3, 400)

    # leantrain prove --generator ckpt-only: the trained prompt, premises and all
    args = ["--generator", ckpt, "--data", nat_basics, "--device", "cpu", *SEARCH]
    code = main(["prove", *map(str, args), "--output-dir", str(tmp_path / "p")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["attempted"] == 3
    assert seen["prove"] and all(SYSTEM in text and "Premises:\n" in text for text in seen["prove"])
    recorded = json.loads((tmp_path / "p" / "prover_config.json").read_text())
    assert (recorded["retriever_checkpoint"], recorded["retriever_sha256"]) == (
        prompt.retriever,
        prompt.retriever_sha256,
    )
    assert (recorded["num_premises"], recorded["max_premise_chars"]) == (3, 400)

    # leantrain llm eval --model ckpt-only: the same prompt
    eval_args = ["llm", "eval", "--model", str(ckpt), "--data", str(nat_basics), "--split", "test"]
    code = main([*eval_args, "--eval-k", "1", "--max-eval-samples", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["model"] == str(ckpt)
    assert len(seen["eval"]) == 2
    for messages, _ in seen["eval"]:
        assert messages[0] == {"role": "system", "content": SYSTEM}
        assert messages[1]["content"].startswith("Premises:\n")

    # GRPO from the copy: trained with the same prompt, which its own checkpoint records
    from leantrain.llm import GRPOTrainer

    GRPOTrainer(
        model_name=str(ckpt),
        output_dir=tmp_path / "grpo",
        reward_funcs=["format"],
        max_steps=1,
        num_generations=2,
        batch_size=2,
        max_completion_length=4,
        train_split="test",
        allow_contamination=True,  # trains on the theorems it proves, on purpose
        evaluate_each_repo=False,
    ).train(nat_basics)
    [refined] = (tmp_path / "grpo" / "grpo").glob("000-*")
    assert read_prompt(refined) == prompt
    capsys.readouterr()  # its progress bars

    # an explicit setting that differs: the prover refuses unless told, eval warns and uses it
    q = str(tmp_path / "q")
    code = main(["prove", *map(str, args), "--system-prompt", "", "--output-dir", q])
    line = _one_line_error(capsys)
    assert code != 0 and "system_prompt ''" in line and "--prompt-override" in line
    seen["eval"].clear()
    code = main([*eval_args, "--eval-k", "1", "--max-eval-samples", "1", "--system-prompt", ""])
    out, err = capsys.readouterr()
    assert code == 0, err
    # one warning line (on stderr via logging's last resort in the CLI; captured here)
    warned = [r.getMessage() for r in caplog.records if "prompt settings" in r.getMessage()]
    assert (
        len(warned) == 1
        and "\n" not in warned[0]
        and "system_prompt ''" in warned[0]
        and str(ckpt) in warned[0]
    )
    assert [m[0]["role"] for m, _ in seen["eval"]] == ["user"]  # no system message, as given


@pytest.fixture
def tiny_model(tmp_path):
    from leantrain.llm.tiny_model import save_tiny_model

    return save_tiny_model(tmp_path / "model")


def _both(nat_basics, model, tmp_path):
    """``prove`` and ``llm eval`` of ``model`` (argv lists)."""
    data = ["--data", str(nat_basics)]
    return [
        ["prove", "--generator", str(model), *data, "--output-dir", str(tmp_path / "o")],
        ["llm", "eval", "--model", str(model), *data, "--max-eval-samples", "1", "--eval-k", "1"],
    ]


def test_a_malformed_prompt_json_is_one_line_naming_it(nat_basics, tiny_model, tmp_path, capsys):
    (tiny_model / PROMPT_NAME).write_text('{"format_version": 1, "system_prompt": 3}')
    for argv in _both(nat_basics, tiny_model, tmp_path):
        code = main(argv)
        line = _one_line_error(capsys)
        assert code != 0 and str(tiny_model / PROMPT_NAME) in line, line
    assert not (tmp_path / "o").exists()


def test_a_missing_or_changed_retriever_is_one_line(nat_basics, tiny_model, tmp_path, capsys):
    from leantrain.tactics.premises import retriever_checkpoint

    retriever = tmp_path / "ret"
    retriever.mkdir()
    (retriever / "retriever.json").write_text("{}")  # never loaded: checked before
    ckpt = retriever_checkpoint(retriever)
    write_prompt(tiny_model, ModelPrompt(retriever=ckpt.path, retriever_sha256=ckpt.sha256))
    (retriever / "retriever.json").write_text('{"changed": 1}')
    for argv in _both(nat_basics, tiny_model, tmp_path):
        code = main(argv)
        line = _one_line_error(capsys)
        assert code != 0 and "changed since the model was trained" in line, line
        assert ckpt.sha256[:12] in line
    shutil.rmtree(retriever)
    for argv in _both(nat_basics, tiny_model, tmp_path):
        code = main(argv)
        line = _one_line_error(capsys)
        assert code != 0 and f"{ckpt.path} is missing" in line and "--retriever PATH" in line
        assert str(tiny_model / PROMPT_NAME) in line
    assert not (tmp_path / "o").exists()
