"""Configuration of :func:`~leantrain.export.export_merged.export_merged_data`."""

from __future__ import annotations

from dataclasses import dataclass, field

from leantrain.core.errors import ConfigError


@dataclass
class ExportConfig:
    """How the merged export splits theorems. Fill it from Python, a dict, YAML or CLI flags
    with :mod:`leantrain.core.config`."""

    val_fraction: float = field(
        default=0.2, metadata={"help": "Fraction of theorems in val (LeanDojo-v2 default 0.2)."}
    )
    test_fraction: float = field(
        default=0.2, metadata={"help": "Fraction of theorems in test (LeanDojo-v2 default 0.2)."}
    )
    seed: int = field(
        default=3407, metadata={"help": "Seed of the split hashes; same seed, same splits."}
    )
    novel_premise_rate: float | None = field(
        default=None,
        metadata={
            "help": "Probability that a premise is held out in the novel_premises split; "
            "None calibrates it so that about val+test of the theorems are held out."
        },
    )
    drop_tactics: bool = field(
        default=True,
        metadata={
            "help": "Leave out tactics whose state_before is 'no goals' or that contain '·' "
            "(as LeanDojo-v2 does)."
        },
    )

    def __post_init__(self) -> None:
        for name in ("val_fraction", "test_fraction"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ConfigError(f"{name} must be in [0, 1), got {value}")
        if self.val_fraction + self.test_fraction >= 1.0:
            raise ConfigError(
                f"val_fraction + test_fraction must be below 1 (got {self.val_fraction + self.test_fraction})",
                hint="leave some theorems for training",
            )
        if self.novel_premise_rate is not None and not 0.0 <= self.novel_premise_rate <= 1.0:
            raise ConfigError(
                f"novel_premise_rate must be in [0, 1], got {self.novel_premise_rate}"
            )
