"""Configuration of :func:`~leantrain.export.export_merged.export_merged_data`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from annotated_types import Ge, Lt
from leantrain.core.config import Fraction, setting
from leantrain.core.errors import ConfigError
from leantrain.core.groups import Seed

SplitFraction = Annotated[float, Ge(0), Lt(1)]


@dataclass
class ExportConfig(Seed, defaults={"seed": 3407}):
    """How the merged export splits theorems; ``seed`` seeds the split hashes (same seed, same
    splits). Fill it from Python, a dict, YAML or flags (``leantrain export merge``)."""

    val_fraction: SplitFraction = setting(0.2, "Fraction of theorems in val (as LeanDojo-v2).")
    test_fraction: SplitFraction = setting(0.2, "Fraction of theorems in test (as LeanDojo-v2).")
    novel_premise_rate: Fraction | None = setting(
        None,
        "Probability that a premise is held out in the novel_premises split; None calibrates it "
        "so that about val+test of the theorems are held out.",
    )
    drop_tactics: bool = setting(
        True,
        "Leave out tactics whose state_before is 'no goals' or that contain '·' (as LeanDojo-v2 "
        "does).",
    )

    KEYS: ClassVar[tuple[str, ...]] = (
        "val_fraction",
        "test_fraction",
        "seed",
        "novel_premise_rate",
        "drop_tactics",
    )
    """The settings in the order an export's ``metadata.json`` records them."""

    def check_group(self) -> None:
        """Some theorems are left for training."""
        total = self.val_fraction + self.test_fraction
        if total >= 1.0:
            raise ConfigError(
                f"val_fraction + test_fraction must be below 1 (got {total})",
                hint="leave some theorems for training",
            )
