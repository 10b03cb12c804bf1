"""What every reward shares: reading a completion's text and checking a reward's output."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from leantrain.core.errors import LeanTrainError
from leantrain.llm.rewards.calling import declares_messages, keyword_filter


def completion_text(completion: Any) -> str:
    """The text of one TRL completion.

    A completion is a string (standard format) or a conversation, a list of
    ``{"role", "content"}`` messages (conversational format): then the assistant messages'
    contents are joined (normally there is exactly one). A bare message dict is accepted too.
    """
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        content = completion.get("content", "")
        return content if isinstance(content, str) else str(content)
    if isinstance(completion, Sequence):
        parts = []
        for message in completion:
            if isinstance(message, dict):
                if message.get("role", "assistant") == "assistant":
                    parts.append(completion_text(message))
            else:
                parts.append(completion_text(message))
        return "".join(parts)
    raise LeanTrainError(
        f"cannot read a completion of type {type(completion).__name__}",
        hint="completions must be strings or lists of {'role', 'content'} messages",
    )


def validate_reward_output(values: Any, n: int, name: str) -> list[float | None]:
    """Check that reward ``name`` returned ``n`` finite numbers (or ``None`` = not applicable).

    Returns the values as ``float`` (``None`` kept). A wrong length, a non-numeric value, NaN or
    infinity raises :class:`~leantrain.core.errors.LeanTrainError` naming the reward.
    """
    shape = getattr(values, "shape", None)
    if shape is not None and len(shape) != 1:  # a tensor / array: one value per completion
        raise LeanTrainError(
            f"reward '{name}' returned an array of shape {tuple(shape)}, not {n} values",
            hint="return a list or a 1-D tensor with one float per completion",
        )
    if (
        isinstance(values, (str, bytes))
        or not hasattr(values, "__len__")
        or not hasattr(values, "__iter__")
    ):
        raise LeanTrainError(
            f"reward '{name}' returned {type(values).__name__}, not a list of {n} numbers",
            hint="a reward function returns one float (or None) per completion",
        )
    values = list(values)
    if len(values) != n:
        raise LeanTrainError(
            f"reward '{name}' returned {len(values)} values for {n} completions",
            hint="a reward function returns exactly one float (or None) per completion",
        )
    out: list[float | None] = []
    for i, value in enumerate(values):
        if value is None:
            out.append(None)
            continue
        if isinstance(value, (bool, str, bytes)) or not hasattr(value, "__float__"):
            raise LeanTrainError(
                f"reward '{name}' returned a non-numeric value for completion {i}: {value!r}",
                hint="return a float (or None when the reward does not apply)",
            )
        x = float(value)
        if math.isnan(x) or math.isinf(x):
            raise LeanTrainError(
                f"reward '{name}' returned {x} for completion {i}",
                hint="rewards must be finite; return None when a completion cannot be scored",
            )
        out.append(x)
    return out


class ValidatedReward:
    """A reward function whose every output is checked by :func:`validate_reward_output`.

    Keeps TRL's signature ``(prompts, completions, completion_ids=None, **kwargs)`` and has the
    ``__name__`` TRL logs the reward by. ``func`` gets the completions as text (``str``) unless
    it declares it wants chat messages (``messages=None``: decided by
    :func:`~leantrain.llm.rewards.calling.declares_messages`), and only the keyword arguments
    it accepts.
    """

    def __init__(
        self, func: Callable[..., Any], name: str, *, messages: bool | None = None
    ) -> None:
        self.func = func
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = getattr(func, "__doc__", None)
        self.messages = declares_messages(func) if messages is None else messages
        self._accepted = keyword_filter(func)

    def __call__(
        self,
        prompts: Any = None,
        completions: Sequence[Any] = (),
        completion_ids: Any = None,
        **kwargs: Any,
    ) -> list[float | None]:
        given = completions if self.messages else [completion_text(c) for c in completions]
        values = self.func(
            **self._accepted(
                {
                    "prompts": prompts,
                    "completions": given,
                    "completion_ids": completion_ids,
                    **kwargs,
                }
            )
        )
        return validate_reward_output(values, len(completions), self.__name__)

    def __repr__(self) -> str:
        return f"ValidatedReward({self.__name__!r}, {self.func!r})"
