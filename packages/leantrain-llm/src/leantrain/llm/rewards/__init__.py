"""Reward functions for GRPO on Lean tactics, in TRL's reward-function form.

A reward is called as ``f(prompts, completions, completion_ids=None, **columns)`` and returns
one float (or ``None``: not applicable) per completion — a list or a 1-D tensor; completions
are the tactic texts (``str``), or conversations (``[{"role": "assistant", "content": …}]``)
for a reward that declares it wants them (``@wants_messages`` / ``fn.wants_messages = True``,
or ``completions: list[list[dict]]``, see :mod:`~leantrain.llm.rewards.calling`); a reward
without ``**kwargs`` gets only the arguments it names. ``columns`` are the GRPO
dataset's columns (``reference``, ``premises``, ``problem``, ``proof_prefix`` …, see
:func:`leantrain.tactics.create_rl_dataset`).

Built in (registered in :data:`leantrain.core.registry.REWARDS`):

============== =========================================================================
``format``      1 for a non-empty single-line tactic without code fences, else 0
``no_sorry``    1 unless the tactic uses ``sorry`` / ``admit``
``reference_match``  1 for the reference (exact or whitespace-normalised), partial credit
                ``partial_credit × token F1`` otherwise (class: ``normalized_credit``,
                ``partial_credit``)
``length_penalty``   0 up to ``max_chars``, down to ``-penalty`` at twice that (class)
``premise_mention``  fraction of the reference's annotated premises named; None without any
``lean``        +1 when Lean (leantrain-lean's contract: ``backend`` repl / pantograph /
                leandojo / kimina) accepts the completion: at ``level`` tactic, the tactic
                runs after the proof prefix and changes the state, or finishes a proof that
                passes the whole-theorem re-check; at ``level`` proof, the whole proof passes
                it; at ``level`` whole, the proof in a ``--mode whole`` reply passes it
                (``replay``: only the traced proof) (class: ``LeanArgs`` options,
                ``lean_backend``, ``cache_size``). ``lean_verified`` is its old name (PORTING.md)
``whole_format``  1 for a reply that is one whole proof (bare or in one code block, no sorry)
``proof_length``  ``length_penalty`` for whole proofs (``max_chars`` 2000) (class)
============== =========================================================================

Registry convention: a ``REWARDS`` entry is either a reward function, or a class / factory
taking keyword options whose instance is a reward function (it must have a ``__name__``).
:func:`build_reward_funcs` instantiates classes and factories with the spec's options
(``{"name": "length_penalty", "weight": 0.5, "max_chars": 80}``). Other packages add rewards
through the entry-point group ``leantrain.rewards`` (leantrain-progress publishes
``progress = leantrain.progress.reward:ProgressReward``, a class), and ``"module:attr"`` names
anything importable. Every built function is wrapped so that its output is validated
(:func:`validate_reward_output`: length, NaN, non-numeric values are errors naming the reward).
"""

from leantrain.llm.rewards.build import RewardSpec, build_reward_funcs
from leantrain.llm.rewards.calling import declares_messages, wants_messages
from leantrain.llm.rewards.lean import LeanReward
from leantrain.llm.rewards.text_rewards import (
    LengthPenaltyReward,
    ProofLengthReward,
    ReferenceMatchReward,
    format_reward,
    mentions_premise,
    no_sorry_reward,
    premise_mention_reward,
    reference_match_reward,
    token_f1,
    whole_format_reward,
)
from leantrain.llm.rewards.validation import (
    ValidatedReward,
    completion_text,
    validate_reward_output,
)

__all__ = [
    "LeanReward",
    "LengthPenaltyReward",
    "ProofLengthReward",
    "ReferenceMatchReward",
    "RewardSpec",
    "ValidatedReward",
    "build_reward_funcs",
    "completion_text",
    "declares_messages",
    "format_reward",
    "mentions_premise",
    "no_sorry_reward",
    "premise_mention_reward",
    "reference_match_reward",
    "token_f1",
    "validate_reward_output",
    "wants_messages",
    "whole_format_reward",
]
