"""``VERLTrainingManager``: leantrain's tactic RL (or whole-proof RL, ``mode: whole``) on VERL,
repo by repo.

::

    manager = VERLTrainingManager(config="grpo_trainer.yaml", algorithm_type="grpo")
    stats = manager.train(data_path="export_dir", output_dir="runs/verl")
    manager.evaluate("export_dir"); manager.save("model_dir"); manager.load("model_dir")

It is a :class:`leantrain.core.lifelong.LifelongTrainer` (``name = "verl"``): ``train`` runs the
one lifelong engine; each step converts the step's data to VERL parquet, composes the config
over VERL's ``ppo_trainer.yaml``, validates it on CPU, launches VERL's own entry point
(``python -m verl.trainer.main_ppo``, on Ray) and merges VERL's last actor checkpoint back to a
plain Hugging Face model dir with VERL's model merger, so the next step, ``leantrain llm eval``
or a later SFT start from it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from leantrain.core.atomic import atomic_write_json, atomic_write_text
from leantrain.core.config import config_from_dict, resolve
from leantrain.core.errors import CheckpointError, ConfigError, LeanTrainError
from leantrain.core.lifelong import Step, fit, train_data
from leantrain.core.lifelong.engine import UNTRACKED_KEYS
from leantrain.verl.algorithms import select_algorithm
from leantrain.verl.config import LeantrainSection
from leantrain.verl.core_algos import ENV, CustomAdvantage, find_advantage_function
from leantrain.verl.data import (
    check_data_path,
    convert_to_verl,
    parquet_dataset,
    parquet_files,
    parquet_path,
)
from leantrain.verl.rewards import (
    REWARD_FUNCTIONS,
    REWARD_MANAGERS,
    default_rewards,
    manager_contract,
    mode_rewards,
    registered_name,
)
from leantrain.verl.verifier import verifier_reward
from leantrain.verl.verl_config import (
    compose_config,
    load_user_yaml,
    split_overrides,
    to_yaml,
    validate_config,
)
from leantrain.verl.worker_setup import HOOK, REWARD_MODULES_ENV, WorkerImports, reward_imports

Launcher = Callable[[list[str], dict[str, str], Path], int]
"""``launcher(command, env, log_file) -> exit code`` (default: a subprocess, output teed)."""

CONFIG_NAME = "verl_config"

LEANTRAIN_KEYS = {f.name: f.metadata["help"] for f in dataclasses.fields(LeantrainSection)}
"""Keys of the YAML's ``leantrain:`` section (not VERL's), with their help texts."""

_STEP_RE = re.compile(r"step:(\d+)\s+-\s+(.*)")


def default_launcher(command: list[str], env: dict[str, str], log_file: Path) -> int:
    """Run ``command``; stream its output to the console and ``log_file``."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "a", encoding="utf-8") as log:
        proc = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stderr.write(line)
            log.write(line)
        return proc.wait()


def parse_console_metrics(text: str) -> dict[str, float]:
    """The last ``step:N - key:value - …`` line of VERL's console logger, as numbers."""
    last: dict[str, float] = {}
    for line in text.splitlines():
        m = _STEP_RE.search(line)
        if not m:
            continue
        metrics: dict[str, float] = {"global_step": float(m.group(1))}
        for part in m.group(2).split(" - "):
            key, sep, value = part.partition(":")
            try:
                metrics[key.strip()] = float(value) if sep else float("nan")
            except ValueError:
                continue
        last = metrics
    return last


def _worker_env(cfg: Any) -> dict[str, str]:
    """leantrain's variables in the resolved config's Ray ``runtime_env``."""
    env = cfg.ray_kwargs.ray_init.runtime_env.get("env_vars") or {}
    return {k: str(v) for k, v in env.items() if k in (ENV, REWARD_MODULES_ENV)}


class VERLTrainingManager:
    """Tactic RL on VERL (see the module docstring).

    ``config`` is a YAML path or dict in VERL's sections (plus an optional ``leantrain:``
    section, :data:`LEANTRAIN_KEYS`); ``algorithm_type`` one of
    :data:`leantrain.verl.algorithms.ALGORITHMS`; ``overrides`` dotted VERL keys
    (``{"data.train_batch_size": 8}`` or ``["data.train_batch_size=8"]``); ``core_algos`` /
    ``core_function`` a custom advantage function (imported: passing it is the opt-in; a module
    name or a ``.py`` file). The seed toolkit's keywords are taken as they were:
    ``reward_function`` / ``reward_manager_class`` (a registered function / class),
    ``core_algos_module`` / ``core_algos_function``; its YAML's ``verifier:`` section is Lean's
    check as a reward (:mod:`leantrain.verl.verifier`).
    """

    name = "verl"
    score_key = "top1_accuracy"
    higher_is_better = True

    def __init__(
        self,
        config: str | Path | Mapping[str, Any] | None = None,
        algorithm_type: str = "grpo",
        reward_function: Callable[..., float] | None = None,
        reward_manager_class: type | None = None,
        core_algos_module: str | None = None,
        core_algos_function: str | None = None,
        *,
        overrides: Mapping[str, Any] | Sequence[str] | None = None,
        model_name: str | None = None,
        output_dir: str | Path | None = None,
        rewards: Sequence[Any] | None = None,
        reward_manager: str | None = None,
        core_algos: str | None = None,
        core_function: str | None = None,
        allow_code: bool | None = None,
        launcher: Launcher | None = None,
        **leantrain: Any,
    ) -> None:
        select_algorithm(algorithm_type)  # unknown type: fail now; PRIME says what runs
        user = load_user_yaml(config) if isinstance(config, (str, Path)) else dict(config or {})
        core_algos, core_function = (
            core_algos or core_algos_module,
            core_function or core_algos_function,
        )
        if reward_function is not None:  # the seed's: the run's reward function
            name = registered_name(REWARD_FUNCTIONS, reward_function, "reward function")
            rewards = [*(rewards or ()), name]
        if reward_manager_class is not None:
            reward_manager = registered_name(
                REWARD_MANAGERS, reward_manager_class, "reward manager"
            )
        overrides, leantrain_overrides = split_overrides(overrides)
        named = {
            "model_name": model_name,
            "rewards": None if rewards is None else list(rewards),
            "reward_manager": reward_manager,
            "allow_code": allow_code,
        }  # None: not given; a None among ``leantrain`` is a value (max_eval_samples=None)
        given = {**{k: v for k, v in named.items() if v is not None}, **leantrain}
        source = f"{config if isinstance(config, (str, Path)) else 'config'}, section 'leantrain:'"
        given_keys: dict[str, Any] = {}  # the YAML's section < leantrain.* overrides < keywords
        for where, values in (
            (source, dict(user.get("leantrain") or {})),
            ("override", leantrain_overrides),
            ("keyword arguments", given),
        ):
            given_keys.update(resolve(LeantrainSection, values, source=where))
        self.section = config_from_dict(LeantrainSection, given_keys, source=source)
        """The typed ``leantrain:`` section (defaults where not given)."""
        rewards = self.section.rewards
        verifier = verifier_reward(user.get("verifier"), source.split(",")[0])
        if verifier is not None:
            rewards = [*(rewards or default_rewards(self.section.mode)), verifier]
        # the one place the mode reaches the rewards (whole: its defaults, lean at level whole)
        self.section.rewards = mode_rewards(rewards, self.section.mode)
        self.user_config = user
        self.config_source = str(config) if isinstance(config, (str, Path)) else "config"
        self.algorithm_type = algorithm_type
        self.overrides = overrides
        self.settings = {k: getattr(self.section, k) for k in given_keys}  # the given keys
        self.output_dir = Path(output_dir) if output_dir is not None else Path("runs/verl")
        self.launcher = launcher or default_launcher
        self.allow_code = self.section.allow_code
        self.custom: CustomAdvantage | None = None
        if core_algos:
            # given as an argument (CLI flag / Python), never from the config file: the opt-in
            self.custom = find_advantage_function(
                core_algos, core_function, algorithm_type=algorithm_type
            )
        elif core_function:
            raise ConfigError("--core_function needs --core_algos (the module that holds it)")
        if self.section.reward_manager:  # a class of neither contract fails here, not in Ray
            cls = REWARD_MANAGERS.get(self.section.reward_manager, allow_code=self.allow_code)
            manager_contract(cls, self.section.reward_manager, self.section.reward_manager_options)
        self.model_dir: Path | None = None  # the current model (HF dir), once trained or loaded
        # compose once now: a bad key or an impossible batch fails here, in seconds
        validate_config(self.resolved_config(), need_data=False)

    # -- configuration ----------------------------------------------------------------------
    @property
    def base_model(self) -> str:
        name = self.section.model_name
        if name:
            return str(name)
        path = (
            self.user_config.get("actor_rollout_ref", {}).get("model", {}).get("path")
            if isinstance(self.user_config.get("actor_rollout_ref"), Mapping)
            else None
        )
        if not path:
            raise ConfigError(
                "no model to train",
                hint="set leantrain.model_name or actor_rollout_ref.model.path (an HF model dir)",
            )
        return str(path)

    def resolved_config(
        self,
        *,
        train_file: str | Path | None = None,
        val_file: str | Path | None = None,
        model_path: str | Path | None = None,
        work_dir: str | Path | None = None,
    ) -> Any:
        """The full VERL config of a step (placeholders where a step's paths are not known)."""
        work = Path(work_dir) if work_dir is not None else self.output_dir / "verl/work/000"
        cfg = compose_config(
            self.user_config,
            algorithm_type=self.algorithm_type,
            overrides=self.overrides,
            source=self.config_source,
        )
        from omegaconf import OmegaConf, open_dict

        values: dict[str, Any] = {
            "data.train_files": str(train_file or work / "data/train.parquet"),
            "data.val_files": str(val_file or work / "data/val.parquet"),
            "actor_rollout_ref.model.path": str(model_path or self._model_placeholder()),
            "trainer.default_local_dir": str(work / "checkpoints"),
            # pkg://: VERL imports leantrain.verl.rewards itself (a file path would load a
            # second copy, whose registries hold nothing the user's modules registered)
            "reward.custom_reward_function.path": "pkg://leantrain.verl.rewards",
            "reward.custom_reward_function.name": "compute_score",
        }
        if self.custom is not None:
            values["algorithm.adv_estimator"] = self.custom.estimator
        if not isinstance(cfg.trainer.save_freq, int) or cfg.trainer.save_freq <= 0:
            # the step's model is VERL's last checkpoint: VERL saves at the last step whenever
            # save_freq > 0, so a save_freq beyond the run saves exactly that one
            values["trainer.save_freq"] = 1_000_000
        kwargs = {
            "rewards": list(self.section.rewards or []) or None,
            "allow_code": self.allow_code,
        }
        if self.section.reward_manager:
            values["reward.reward_manager.source"] = "importlib"
            values["reward.reward_manager.name"] = "LeantrainRewardManager"
            values["reward.reward_manager.module.path"] = "pkg://leantrain.verl.verl_reward_manager"
            kwargs["leantrain_manager"] = self.section.reward_manager
            kwargs["leantrain_manager_options"] = dict(self.section.reward_manager_options or {})
        with open_dict(cfg):
            for key, value in values.items():
                OmegaConf.update(cfg, key, value, merge=True)
            fn = cfg.reward.custom_reward_function
            fn.reward_kwargs = {**kwargs, **dict(fn.get("reward_kwargs") or {})}
            used = OmegaConf.to_container(fn.reward_kwargs, resolve=True)
            assert isinstance(used, dict)
            # the modules that registered the run's rewards, imported again in every worker
            imports = reward_imports(
                used.get("rewards"),
                used.get("leantrain_manager"),
                allow_code=bool(used.get("allow_code")),
            )
            worker_env: dict[str, str] = {}
            if self.custom is not None:
                worker_env[ENV] = self.custom.spec
            if imports.modules:
                worker_env[REWARD_MODULES_ENV] = imports.payload()
            if worker_env:
                env = cfg.ray_kwargs.ray_init.runtime_env
                env.worker_process_setup_hook = HOOK
                custom_dir = self.custom.path if self.custom else None
                path = os.pathsep.join(
                    p
                    for p in (os.getcwd(), *imports.paths, custom_dir, os.environ.get("PYTHONPATH"))
                    if p
                )
                env.env_vars = {
                    **dict(env.get("env_vars") or {}),
                    **worker_env,
                    "PYTHONPATH": path,  # the user's modules, in every Ray worker
                }
        return cfg

    def _model_placeholder(self) -> str:
        try:
            return self.base_model
        except ConfigError:
            return "<leantrain.model_name>"

    def command(self, config_dir: str | Path) -> list[str]:
        """VERL's own entry point on the saved config."""
        return [
            sys.executable,
            "-m",
            "verl.trainer.main_ppo",
            f"--config-path={Path(config_dir).absolute()}",
            f"--config-name={CONFIG_NAME}",
        ]

    def check_inputs(self, data_path: Any = None, database: Any = None) -> None:
        """Everything a run needs that can be checked on CPU without writing anything: the
        data (``data_path`` or a ``database`` path), the rewards and the reward manager named
        in the config, and the output directory (a new one, or an earlier leantrain run).
        Each problem is one :class:`ConfigError` line (exit 2 on the command line)."""
        from leantrain.core.output_dir import check_output_dir
        from leantrain.verl.rewards import build_scorers

        check_output_dir(self.output_dir, kind="run", flag="--output_dir")
        if database is not None:
            if isinstance(database, (str, Path)) and not Path(database).is_file():
                raise ConfigError(
                    f"--database '{database}': no such file",
                    hint="give a leantrain database (leantrain export import … --db FILE)",
                )
        else:
            check_data_path(data_path, self.section)
        build_scorers(self.section.rewards, allow_code=self.allow_code)

    def dry_run(self, data_path: Any = None, *, database: Any = None) -> dict[str, Any]:
        """The resolved config (YAML) and the command, without converting, launching or writing
        anything; ``data_path`` / ``database`` (optional here) are checked as a run would."""
        self.check_inputs(data_path, database)
        cfg = self.resolved_config()
        validate_config(cfg, need_data=False)
        work = self.output_dir / "verl/work/000"
        payload = _worker_env(cfg).get(REWARD_MODULES_ENV)
        imports = WorkerImports.from_payload(payload) if payload else None
        return {
            "algorithm_type": self.algorithm_type,
            "adv_estimator": str(cfg.algorithm.adv_estimator),
            "custom_advantage": None if self.custom is None else self.custom.spec,
            "reward_modules": list(imports.modules) if imports else [],
            "config": to_yaml(cfg),
            "command": self.command(work),
        }

    # -- training ---------------------------------------------------------------------------
    def train(
        self,
        repos: Sequence[Any] | str | Path | None = None,
        database: Any = None,
        export_dir: str | Path | None = None,
        *,
        data_path: Any = None,
        output_dir: str | Path | None = None,
        overwrite: bool | None = None,
        evaluate_each_repo: bool = True,
    ) -> dict[str, Any]:
        """Train; returns ``{output_dir, per_repo, final, checkpoints, model_dir, evals}``.

        The trainers' one signature (:func:`leantrain.core.lifelong.train_data`):
        ``train(data_path=…)`` (or ``train(path)``) is one step on an export dir / split file;
        ``train(repos, database, export_dir)`` is lifelong (each step from the previous step's
        model, merged exports under ``export_dir``). ``overwrite`` defaults to the section's;
        ``evaluate_each_repo=False`` skips the evaluation after each step.
        """
        if output_dir is not None:
            self.output_dir = Path(output_dir)
        source = train_data(repos, database, data_path)
        self.check_inputs(source.get("data"), source.get("database"))  # before the run dir
        result = fit(
            self, repos, database, export_dir, data_path=data_path,
            configs={self.name: self._fingerprint()},
            overwrite=self.section.overwrite if overwrite is None else overwrite,
            evaluate_each_repo=evaluate_each_repo,
            output_flag="--output_dir",
        )  # fmt: skip
        if result.get("model_dir"):
            # the step's work dir (VERL's merged model) is gone: the saved checkpoint is current
            self.model_dir = Path(result["model_dir"])
        return result

    def _fingerprint(self) -> dict[str, Any]:
        return {
            "algorithm_type": self.algorithm_type,
            "config": self.user_config,
            "overrides": self.overrides,  # VERL keys → values (leantrain.* are in "leantrain")
            "custom_advantage": None if self.custom is None else self.custom.spec,
            # how a run treats an earlier one, and the guard's settings (they only decide
            # whether it may start), are no settings of the run (a resume drops them)
            "leantrain": {k: v for k, v in self.settings.items() if k not in UNTRACKED_KEYS},
        }

    def train_step(self, step: Step) -> dict[str, Any]:
        """Convert, compose, validate, launch VERL, merge its checkpoint to an HF dir."""
        work = Path(step.work_dir).absolute()
        if (parquet := parquet_path(step.data)) is not None:  # the user's, checked
            files = parquet_files(parquet)
        else:
            files = convert_to_verl(
                step.data,
                work / "data",
                settings=self.section,
                max_samples={"train": self.section.max_train_samples},
            )
        model = step.init_from or self.model_dir or self.base_model
        cfg = self.resolved_config(
            train_file=files["train"], val_file=files["val"], model_path=model, work_dir=work
        )
        validate_config(cfg)
        atomic_write_text(work / f"{CONFIG_NAME}.yaml", to_yaml(cfg))
        env = {**os.environ, **_worker_env(cfg)}
        log_file = step.log_file or work / "verl.log"
        code = self.launcher(self.command(work), env, log_file)
        if code != 0:
            raise LeanTrainError(
                f"VERL exited with code {code}", hint=f"see its output in {log_file}"
            )
        self.model_dir = self.merge_checkpoint(work / "checkpoints", work / "merged")
        text = log_file.read_text(encoding="utf-8") if log_file.is_file() else ""
        metrics = parse_console_metrics(text)
        return {"algorithm_type": self.algorithm_type, **metrics}

    def merge_checkpoint(self, checkpoints: Path, target: Path) -> Path:
        """VERL's model merger: the newest ``global_step_*/actor`` → an HF model dir."""
        steps = sorted(
            checkpoints.glob("global_step_*"), key=lambda p: int(p.name.rsplit("_", 1)[1])
        )
        if not steps or not (steps[-1] / "actor").is_dir():
            raise CheckpointError(
                f"VERL wrote no actor checkpoint under {checkpoints}",
                hint="set trainer.save_freq (e.g. to trainer.total_training_steps)",
            )
        cmd = [
            sys.executable,
            "-m",
            "verl.model_merger",
            "merge",
            "--backend",
            "fsdp",
            "--local_dir",
            str(steps[-1] / "actor"),
            "--target_dir",
            str(target),
        ]
        code = self.launcher(cmd, dict(os.environ), target.parent / "merge.log")
        if code != 0 or not (target / "config.json").is_file():
            raise CheckpointError(f"VERL's model merger failed on {steps[-1] / 'actor'}")
        return target

    # -- model ------------------------------------------------------------------------------
    def _current(self) -> str:
        return str(self.model_dir) if self.model_dir is not None else self.base_model

    def save(self, path: str | Path) -> None:
        """Copy the current HF model dir to ``path`` (+ ``prompt.json``, the prompt it was
        trained with, and ``leantrain_model.json``)."""
        from leantrain.llm.training_data import model_prompt
        from leantrain.tactics.model_prompt import write_prompt

        src = Path(self._current())
        if not (src / "config.json").is_file():
            raise CheckpointError(f"no trained model to save (current model: {src})")
        path = Path(path)
        shutil.copytree(src, path, dirs_exist_ok=True)
        write_prompt(path, model_prompt(self.section))
        atomic_write_json(
            path / "leantrain_model.json",
            {
                "trainer": self.name,
                "algorithm_type": self.algorithm_type,
                "base_model": self.base_model if self.section.model_name else None,
            },
        )

    def load(self, path: str | Path) -> None:
        """Make the HF model dir at ``path`` the current model."""
        path = Path(path)
        if not (path / "config.json").is_file():
            raise CheckpointError(f"{path}: not a Hugging Face model dir (no config.json)")
        self.model_dir = path

    def evaluate(self, data: Any = None, split: str = "test") -> dict[str, float]:
        """``eval_loss`` and top-1 / top-k tactic accuracy of the current model (leantrain-llm's
        evaluation, the same prompts as training); in ``mode: whole`` on the split's whole
        proofs (the loss on the proof tokens, exact matches of the whole proof), as
        ``leantrain grpo --mode whole`` evaluates."""
        from leantrain.llm.evaluation import evaluate_pairs
        from leantrain.llm.model_loading import load_model_and_tokenizer
        from leantrain.llm.training_data import (
            load_rl_dataset,
            load_whole_dataset,
            model_prompt,
            references,
        )

        if data is None:
            raise ConfigError("nothing to evaluate on", hint="pass data=… (an export dir)")
        if (parquet := parquet_path(data)) is not None:  # a VERL parquet: its val rows
            data = parquet_dataset(parquet_files(parquet)["val"])
        whole = self.section.mode == "whole"
        dataset = (load_whole_dataset if whole else load_rl_dataset)(
            data,
            split,
            self.section,
            max_samples=self.section.max_eval_samples,
            prompt=model_prompt(self.section) if whole else None,
        )
        model, tokenizer = load_model_and_tokenizer(self._current())
        return evaluate_pairs(
            model,
            tokenizer,
            references(dataset),
            k=self.section.eval_k,
            max_new_tokens=self.section.eval_max_new_tokens,
        )
