"""How a reward function is called: completions as text or as chat messages, and only the
keyword arguments it accepts.

TRL hands a reward the completions in the dataset's format: with leantrain's (conversational)
GRPO rows each completion is a list of ``{"role", "content"}`` messages. A reward written as
LeanDojo-v2 documents it — ``reward_func(completions, **kwargs)`` doing ``"sorry" in c`` or
``len(c)`` — would then score the list, not the tactic, with no error. So every reward gets the
tactic **text** (``str``) unless it declares that it wants the messages, by either

* a flag: ``fn.wants_messages = True`` (on the function, its class or the instance), or the
  :func:`wants_messages` decorator; or
* the annotation of its ``completions`` parameter naming a message type
  (``completions: list[list[dict]]``, ``Sequence[list[Message]]``, …); ``list[str]`` or no
  annotation means text.

leantrain's own rewards read either form, so they work both ways.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_MESSAGE_WORDS = ("dict", "mapping", "message")


def wants_messages(func: F) -> F:
    """Decorator: give this reward the completions as chat messages, not text."""
    func.wants_messages = True  # type: ignore[attr-defined]
    return func


def _hints_owner(func: Any) -> Any:
    """Where the annotations of ``func`` live (``__call__`` of a callable instance)."""
    if inspect.isfunction(func) or inspect.ismethod(func) or inspect.isclass(func):
        return func
    return getattr(type(func), "__call__", func)  # noqa: B004 - its class's __call__


def _completions_annotation(func: Any) -> Any:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return None
    param = params.get("completions")
    if param is None or param.annotation is inspect.Parameter.empty:
        return None
    try:  # resolve ``from __future__ import annotations`` strings where possible
        return typing.get_type_hints(_hints_owner(func)).get("completions", param.annotation)
    except Exception:
        return param.annotation


def declares_messages(func: Any) -> bool:
    """True if reward ``func`` asks for chat-message completions (flag or annotation)."""
    flag = getattr(func, "wants_messages", None)
    if flag is None:
        flag = getattr(type(func), "wants_messages", None)
    if flag is not None:
        return bool(flag)
    annotation = _completions_annotation(func)
    if annotation is None:
        return False
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return any(word in text.lower() for word in _MESSAGE_WORDS)


def keyword_filter(func: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function keeping only the keyword arguments ``func`` accepts (all, with ``**kwargs``),
    so that ``def reward(completions, reference)`` works although TRL passes every column."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return lambda kwargs: kwargs
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return lambda kwargs: kwargs
    names = {
        name for name, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    return lambda kwargs: {k: v for k, v in kwargs.items() if k in names}
