"""``leantrain sft``, ``leantrain grpo``, ``leantrain llm eval``, ``leantrain llm merge-lora`` and
``leantrain llm convert``.

This module is imported by every ``leantrain`` invocation, so it imports nothing heavy: the
configs (which import trl) and trainers load inside each command's ``run``, after leantrain's
own settings and the data were checked (:func:`_check_first`), so bad input fails in seconds.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from leantrain.core.command import ArgumentParser, Command


def _print(result: dict) -> None:
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str))


def _show_logs() -> None:
    """Training log lines of the ``leantrain.llm`` logger on stderr (stdout stays JSON)."""
    import logging

    ours = logging.getLogger("leantrain.llm")
    if not ours.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        ours.addHandler(handler)
        ours.setLevel(logging.INFO)


def _check_first(argv: Sequence[str], split: str | None = None, *, rl: bool = False) -> None:
    """leantrain's own settings and the first example of the data, checked in about a second:
    before TRL and transformers are imported (tens of seconds), so a typo, an empty or a
    binary data file fails at once. ``--help`` skips it."""
    if "-h" in argv or "--help" in argv:
        return
    from leantrain.core.config import parse_known
    from leantrain.llm.common_config import LeanTrainArguments

    own = parse_known(LeanTrainArguments, argv)
    own._check_common()
    if own.data_path is not None:
        _check_data(own.data_path, split or own.train_split, own, rl=rl)


def _check_data(data: str, split: str, settings: object, *, rl: bool = False) -> None:
    """Read ``data`` up to its first usable example (``DataError`` naming the file if none)."""
    from leantrain.llm.training_data import dataset_config
    from leantrain.tactics import create_rl_dataset, create_sft_dataset

    create = create_rl_dataset if rl else create_sft_dataset
    create(data, split, 1, config=dataset_config(settings, max_samples=1))


def _sft(argv: Sequence[str]) -> int:
    _check_first(argv)
    from leantrain.core.config import parse_cli
    from leantrain.llm.runner import train_with_config
    from leantrain.llm.sft_config import SFTConfig

    cfg = parse_cli(
        SFTConfig,
        argv,
        prog="leantrain sft",
        description="Supervised fine-tuning of a tactic generator.",
    )
    _show_logs()
    _print(train_with_config(cfg))
    return 0


def _grpo(argv: Sequence[str]) -> int:
    _check_first(argv, rl=True)
    from leantrain.core.config import parse_cli
    from leantrain.llm.grpo_config import GRPOConfig
    from leantrain.llm.runner import train_with_config

    cfg = parse_cli(
        GRPOConfig,
        argv,
        prog="leantrain grpo",
        description="GRPO refinement of a tactic generator.",
    )
    _show_logs()
    _print(train_with_config(cfg))
    return 0


_LLM_USAGE = (
    "usage: leantrain llm eval --model MODEL --data DIR [--split test] [--eval-k 4]\n"
    "       leantrain llm merge-lora ADAPTER_DIR OUT_DIR\n"
    "       leantrain llm convert GGUF_FILE_OR_DIR OUT_DIR\n\n"
    "commands:\n"
    "  eval        eval loss and top-1 / top-k tactic accuracy of a model on a split\n"
    "  merge-lora  merge a LoRA adapter (or a LoRA run's newest model) into its base model\n"
    "  convert     write a GGUF model (llama.cpp's format) as a plain model directory"
)


def _merge_lora(argv: Sequence[str]) -> int:
    parser = ArgumentParser(
        prog="leantrain llm merge-lora",
        description="Merge a LoRA adapter into its base model: a plain model directory.",
    )
    parser.add_argument("adapter_dir", help="LoRA adapter dir, or a run dir trained with LoRA")
    parser.add_argument("out_dir", help="new directory for the merged model")
    args = parser.parse_args(list(argv))
    from leantrain.llm.merge import merge_lora

    _print({"merged_model": str(merge_lora(args.adapter_dir, args.out_dir))})
    return 0


def _convert(argv: Sequence[str]) -> int:
    parser = ArgumentParser(
        prog="leantrain llm convert",
        description="Write a GGUF model as a plain model directory (safetensors, tokenizer, chat "
        "template) that --model and from_pretrained load; needs leantrain-llm[gguf].",
    )
    parser.add_argument("gguf", help="a .gguf file, or a directory holding exactly one")
    parser.add_argument("out_dir", help="new directory for the converted model")
    args = parser.parse_args(list(argv))
    from leantrain.llm.gguf import convert_gguf

    _print(convert_gguf(args.gguf, args.out_dir))
    return 0


def _llm(argv: Sequence[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_LLM_USAGE)
        return 0
    if argv[0] == "merge-lora":
        return _merge_lora(argv[1:])
    if argv[0] == "convert":
        return _convert(argv[1:])
    if argv[0] != "eval":
        print(
            f"error: unknown llm command '{argv[0]}' (try: leantrain llm --help)",
            file=sys.stderr,
        )
        return 2
    from leantrain.core.config import parse_cli
    from leantrain.llm.eval_config import EvalConfig

    cfg = parse_cli(EvalConfig, argv[1:], prog="leantrain llm eval")
    if cfg.data_path is not None:  # before the model and the engines load
        _check_data(cfg.data_path, cfg.split, cfg)
    from leantrain.llm.runner import evaluate_with_config

    _print(evaluate_with_config(cfg))
    return 0


def register() -> list[Command]:
    """The commands of leantrain-llm (entry point ``leantrain.commands``)."""
    return [
        Command(
            "sft", "supervised fine-tuning of the tactic generator (TRL SFT, LoRA, lifelong)", _sft
        ),
        Command("grpo", "GRPO refinement of the tactic generator with reward functions", _grpo),
        Command(
            "llm",
            "tactic generator tools: 'leantrain llm eval', 'leantrain llm merge-lora', "
            "'leantrain llm convert'",
            _llm,
        ),
    ]
