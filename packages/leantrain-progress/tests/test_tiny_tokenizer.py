"""The 'tiny' tokenizer is learnt the same way in every process (reproducible models)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from leantrain.progress.tiny_model import SPECIAL_TOKENS, build_tiny_tokenizer

TEXTS = ["⊢ x + y = y + x", "h : a ≤ b\n⊢ a < b + 1", "intro h; simp [Nat.add_comm] at h", "rfl"]


@pytest.mark.slow
def test_the_same_texts_give_the_same_vocabulary_in_every_process():
    code = (
        "import json; from leantrain.progress.tiny_model import build_tiny_tokenizer; "
        f"print(json.dumps(build_tiny_tokenizer({TEXTS!r}).get_vocab(), sort_keys=True))"
    )
    vocabs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(vocabs) == 1
    assert json.loads(vocabs.pop()) == build_tiny_tokenizer(TEXTS).get_vocab()


def test_nothing_in_the_texts_is_unknown_and_frequent_words_are_whole():
    tok = build_tiny_tokenizer([*TEXTS, "simp simp simp"], vocab_size=200)
    vocab = tok.get_vocab()
    by_id = sorted(vocab, key=vocab.__getitem__)
    assert by_id[: len(SPECIAL_TOKENS)] == list(SPECIAL_TOKENS)
    assert sorted(vocab.values()) == list(range(len(vocab)))
    for text in TEXTS:
        assert tok.unk_token_id not in tok(text)["input_ids"]
    assert tok.tokenize("simp") == ["simp"] and tok.tokenize("Nat.add_comm")[0] == "Nat"
    # a vocabulary size below the alphabet keeps the alphabet (else text would be unknown)
    small = build_tiny_tokenizer(TEXTS, vocab_size=10).get_vocab()
    assert "simp" not in small and "⊢" in small and "##≤" in small
