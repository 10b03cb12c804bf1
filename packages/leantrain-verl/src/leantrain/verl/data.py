"""leantrain's RL rows → VERL's parquet format.

The rows are exactly those of ``leantrain grpo``, in its two modes (the ``mode`` setting):

``tactic`` (default)
    :func:`leantrain.llm.training_data.load_rl_dataset` over
    :func:`leantrain.tactics.create_rl_dataset`: same system prompt, chat messages, reference
    tactic. Each becomes one VERL row::

        data_source   "leantrain/lean4_tactic" (VERL's reward_fn_key selects the scorer by it)
        prompt        [{"role": "system", …}, {"role": "user", <proof state>}]   (prompt_key)
        ability       "lean4"
        reward_model  {"style": "rule", "ground_truth": <reference tactic>}
        extra_info    {split, index, problem, reference, premises, proof_prefix, url, commit,
                       file_path, full_name, tactic_index}  — what leantrain's rewards read

``whole``
    :func:`leantrain.llm.training_data.whole_rows` over
    :func:`leantrain.tactics.whole_proof.whole_proof_rl_rows`: one row per theorem with a
    statement and a proof, the whole-proof prompt::

        data_source   "leantrain/lean4_whole"
        prompt        [{"role": "system", …}, {"role": "user", <header, statement :=>}]
        ability       "lean4"
        reward_model  {"style": "rule", "ground_truth": <reference proof>}
        extra_info    {split, index, problem (the user message), reference, form, origin,
                       formal_statement, header, url, commit, file_path, full_name, start}
                      — what the ``lean`` reward reads at level ``whole`` (``formal_statement``
                      and ``header`` are None for traced rows: Lean reads the statement from
                      the project at ``file_path`` / ``start``)

Before converting an export dir or split file, the contamination guard
(:func:`leantrain.tactics.contamination.guard_training_data`: ``eval_set`` files and the
data's test split against its train split) runs, as before ``leantrain grpo`` trains. Files
are written atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json, file_mode
from leantrain.core.errors import ConfigError, DataError
from leantrain.tactics.dataset_config import SplitArgs

DATA_SOURCE = "leantrain/lean4_tactic"
"""``data_source`` of every converted tactic row."""

WHOLE_DATA_SOURCE = "leantrain/lean4_whole"
"""``data_source`` of every converted whole-proof row (``mode: whole``)."""

EXTRA_COLUMNS = (
    "problem",
    "reference",
    "premises",
    "proof_prefix",
    "url",
    "commit",
    "file_path",
    "full_name",
    "tactic_index",
)
"""Columns of the GRPO dataset kept in ``extra_info`` (leantrain's rewards read them)."""

WHOLE_EXTRA_COLUMNS = (
    "problem",
    "reference",
    "form",
    "origin",
    "formal_statement",
    "header",
    "url",
    "commit",
    "file_path",
    "full_name",
    "start",
)
"""Columns of a whole-proof row kept in ``extra_info`` (``problem``: the user message)."""


def to_verl_rows(dataset: Any, split: str, *, whole: bool = False) -> list[dict[str, Any]]:
    """VERL rows of a GRPO ``datasets.Dataset`` or list of rows (columns of
    ``create_rl_dataset``, or of ``whole_proof_rl_rows`` when ``whole``)."""
    if isinstance(dataset, list):
        columns = list(dataset[0]) if dataset else ["prompt", "reference"]
    else:
        columns = dataset.column_names
    missing = {"prompt", "reference"} - set(columns)
    if missing:
        raise DataError(
            None,
            f"dataset lacks column(s) {sorted(missing)} (columns: {columns})",
            hint="build it with leantrain.tactics.create_rl_dataset (or whole_proof_rl_rows)",
        )
    keep, source = (
        (WHOLE_EXTRA_COLUMNS, WHOLE_DATA_SOURCE) if whole else (EXTRA_COLUMNS, DATA_SOURCE)
    )
    rows = []
    for index, row in enumerate(dataset):
        if whole and "problem" not in row:  # the statement as the model is asked it
            users = [m["content"] for m in row["prompt"] if m["role"] == "user"]
            row = {**row, "problem": users[-1] if users else ""}
        extra = {k: row[k] for k in keep if k in row}
        extra.update({"split": split, "index": index})
        rows.append(
            {
                "data_source": source,
                "prompt": [{"role": m["role"], "content": m["content"]} for m in row["prompt"]],
                "ability": "lean4",
                "reward_model": {"style": "rule", "ground_truth": row["reference"]},
                "extra_info": extra,
            }
        )
    return rows


def write_parquet(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """Write VERL rows to ``path`` atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.chmod(tmp, file_mode())  # what open() would give, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_parquet(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a VERL parquet file (for checks and round trips)."""
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise DataError(path, "parquet file not found")
    return pq.read_table(path).to_pylist()


VERL_COLUMNS = ("prompt", "data_source", "reward_model")
"""Columns VERL's ``RLHFDataset`` and reward loop read (``reward_model.ground_truth`` too)."""


def parquet_path(data: Any) -> Path | None:
    """The VERL parquet ``data`` names: a file starting with parquet's magic bytes (whatever its
    name) or named ``*.parquet``, or a directory holding ``train.parquet`` (as ``leantrain verl
    convert`` writes it); ``None`` for anything else."""
    if not isinstance(data, (str, Path)):
        return None
    path = Path(data)
    if path.is_dir() and (path / "train.parquet").is_file():
        return path / "train.parquet"
    if not path.is_file():
        return None
    with open(path, "rb") as f:
        return path if f.read(4) == b"PAR1" or path.suffix == ".parquet" else None


def check_verl_parquet(path: str | Path, flag: str = "--data_path") -> None:
    """Raise :class:`ConfigError` (one line) unless ``path`` is a VERL parquet: the columns of
    :data:`VERL_COLUMNS`, ``reward_model`` a struct with ``ground_truth``, at least one row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
        schema = meta.schema.to_arrow_schema()
    except (OSError, pa.ArrowException) as e:
        raise ConfigError(f"{flag} '{path}': not a readable parquet file ({e})") from None
    hint = "write it with 'leantrain verl convert' (or leantrain.verl.convert_to_verl)"
    for column in VERL_COLUMNS:
        if column not in schema.names:
            raise ConfigError(
                f"{flag} '{path}': the VERL parquet has no column '{column}' (VERL needs "
                f"{', '.join(VERL_COLUMNS)}; it has {', '.join(schema.names)})",
                hint=hint,
            )
    kind = schema.field("reward_model").type
    if not pa.types.is_struct(kind) or kind.get_field_index("ground_truth") < 0:
        raise ConfigError(
            f"{flag} '{path}': column 'reward_model' has no 'ground_truth' (it is {kind})",
            hint="reward_model = {'style': 'rule', 'ground_truth': <reference tactic>}",
        )
    if meta.num_rows == 0:
        raise ConfigError(f"{flag} '{path}': the parquet has no rows", hint=hint)


def _check_parquet_mode(path: Path, mode: str, flag: str) -> None:
    """Raise :class:`ConfigError` (one line) when the parquet holds leantrain rows of the other
    mode (tactic rows in a ``mode: whole`` run or the reverse: the run's rewards would score
    replies to the other prompts); rows of other sources are the user's and pass."""
    import pyarrow.parquet as pq

    other, kind = (DATA_SOURCE, "tactic") if mode == "whole" else (WHOLE_DATA_SOURCE, "whole-proof")
    sources = pq.read_table(path, columns=["data_source"]).column("data_source").to_pylist()
    if other in sources:
        raise ConfigError(
            f"{flag} '{path}': its rows are leantrain {kind} rows ({other}), and mode is {mode}",
            hint=f"convert the data with --mode {mode} (leantrain verl convert), or train with "
            f"--mode {'tactic' if mode == 'whole' else 'whole'}",
        )


def parquet_files(path: str | Path) -> dict[str, Path]:
    """``{"train", "val"}`` of a ready VERL parquet: ``val.parquet`` beside a ``train.parquet``
    (as ``convert_to_verl`` writes them) when it exists, else the file itself."""
    path = Path(path).absolute()
    val = path.with_name("val.parquet")
    return {"train": path, "val": val if path.name == "train.parquet" and val.is_file() else path}


def parquet_dataset(path: str | Path) -> Any:
    """A VERL parquet's rows as leantrain-llm's RL rows (``prompt``, ``reference``)."""
    import datasets

    rows = read_parquet(path)
    return datasets.Dataset.from_list(
        [{"prompt": r["prompt"], "reference": r["reward_model"]["ground_truth"]} for r in rows]
    )


def check_data_path(data: Any, settings: Any = None, *, flag: str = "--data_path") -> None:
    """Raise :class:`ConfigError` (one line, exit 2) unless ``data`` is training data.

    A ``datasets.Dataset`` (or anything that is not a path) passes. A path must be a ready VERL
    parquet (:func:`check_verl_parquet`), a split file or a leantrain export
    (``<dir>/<split_strategy>/train.json``, or a split dir) whose train split yields at least
    one example of ``settings``' mode (a tactic, or in ``mode: whole`` a theorem with a
    statement and a proof); for tactics only its first theorems are read, so a dry run checks
    the data in about a second. Then the contamination guard (:func:`guard_data`) runs, as
    :func:`convert_to_verl` runs it. ``settings``: the split and prompt settings
    (:class:`~leantrain.verl.config.LeantrainSection`, :class:`~leantrain.verl.config.
    ConvertArgs`; default: ``random``, tactic rows).
    """
    if not isinstance(data, (str, Path)):
        return
    if (parquet := parquet_path(data)) is not None:
        check_verl_parquet(parquet, flag)
        return _check_parquet_mode(parquet, getattr(settings, "mode", "tactic"), flag)
    from leantrain.llm.training_data import load_rl_dataset, whole_rows
    from leantrain.tactics.theorem_source import resolve_split_file

    settings = settings or SplitArgs()
    split_strategy = settings.split_strategy
    hint = (
        "give an export dir from 'leantrain export merge' (random/train.json …), a split file "
        "or a VERL parquet"
    )
    path = Path(data)
    if not path.exists():
        raise ConfigError(f"{flag} '{data}': no such file or directory", hint=hint)
    try:
        resolve_split_file(path, "train", split_strategy)
    except DataError as e:
        raise ConfigError(
            f"{flag} '{data}' is not a leantrain export: no split '{split_strategy}/train.json'",
            hint=e.hint or hint,
        ) from None
    whole = getattr(settings, "mode", "tactic") == "whole"
    try:
        if whole:
            first: Any = whole_rows(data, "train", settings, max_samples=1)
        else:
            first = load_rl_dataset(
                data, "train", SplitArgs(split_strategy=split_strategy), max_samples=1
            )
    except DataError as e:
        raise ConfigError(f"{flag}: {e.message}", hint=e.hint or hint) from None
    if len(first) == 0:
        raise ConfigError(
            f"{flag} '{data}': the train split has no tactic examples",
            hint="check the export (theorems with traced tactics)",
        )
    guard_data(data, settings)


def guard_data(data: Any, settings: Any) -> None:
    """The contamination guard before training on ``data`` (an export dir or split file; a
    parquet or an in-memory dataset has no statements to check): ``settings``' ``eval_set``
    files and the data's test split against its train split, refused unless
    ``allow_contamination`` (:func:`leantrain.tactics.contamination.guard_training_data`)."""
    if not isinstance(data, (str, Path)) or parquet_path(data) is not None:
        return
    if not hasattr(settings, "eval_set"):
        return
    from leantrain.tactics.contamination import guard_training_data

    guard_training_data(
        data,
        eval_sets=settings.eval_set,
        allow=settings.allow_contamination,
        split_strategy=settings.split_strategy,
    )


def convert_to_verl(
    data: Any,
    out_dir: str | Path,
    *,
    splits: tuple[str, ...] = ("train", "val"),
    settings: Any = None,
    max_samples: dict[str, int | None] | None = None,
) -> dict[str, Path]:
    """Convert ``data`` (an export dir, a split file or a ``datasets.Dataset``) to
    ``out_dir/<split>.parquet`` for each split; returns ``{split: path}``.

    ``settings``: a config with the prompt and split settings (:class:`LeantrainSection`,
    :class:`ConvertArgs`; default: ``random``, the default prompt); its ``mode`` chooses tactic
    or whole-proof rows (see the module docstring), its ``eval_set`` /
    ``allow_contamination`` the contamination guard, run first (:func:`guard_data`). An export
    dir without a split falls back to ``train`` for ``val`` (VERL needs val files); an empty
    ``train`` split is a :class:`DataError`.
    """
    from leantrain.llm.training_data import load_rl_dataset, load_whole_dataset, model_prompt

    settings = settings or SplitArgs()
    guard_data(data, settings)
    whole = getattr(settings, "mode", "tactic") == "whole"
    load = load_whole_dataset if whole else load_rl_dataset
    prompt = model_prompt(settings) if whole else None  # whole: its system prompt
    out_dir = Path(out_dir)
    out: dict[str, Path] = {}
    for split in splits:
        limit = (max_samples or {}).get(split)
        try:
            dataset = load(data, split, settings, max_samples=limit, prompt=prompt)
        except DataError:
            if split == "train" or "train" not in out:
                raise
            out[split] = out["train"]
            continue
        rows = to_verl_rows(dataset, split, whole=whole)
        if not rows:
            if split == "train":
                raise DataError(str(data), f"no {split} examples", hint="check the split")
            out[split] = out["train"]
            continue
        out[split] = write_parquet(rows, out_dir / f"{split}.parquet")
    meta = {"source": str(data), "files": {k: str(v) for k, v in out.items()}}
    atomic_write_json(out_dir / "leantrain_verl_data.json", meta)
    return out
