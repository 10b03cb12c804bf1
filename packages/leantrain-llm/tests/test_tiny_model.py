from leantrain.llm.tiny_model import build_tiny_model, save_tiny_model

STATE = "ι : Type u_1\nI✝ J✝ : Box ι\nx y : ι → ℝ\n⊢ ↑I = ↑J ↔ I = J 🙂"


def test_tokenizer_round_trips_unicode_and_reloads_with_same_ids(tmp_path):
    from transformers import AutoTokenizer

    _, tok = build_tiny_model()
    ids = tok(STATE, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == STATE
    assert tok.unk_token_id not in ids  # byte fallback covers characters outside the vocabulary
    save_tiny_model(tmp_path / "tiny")
    reloaded = AutoTokenizer.from_pretrained(tmp_path / "tiny")
    assert reloaded(STATE, add_special_tokens=False)["input_ids"] == ids
    assert reloaded.decode(ids) == STATE
    msgs = [{"role": "user", "content": "⊢ True"}]
    assert reloaded.apply_chat_template(msgs, tokenize=False) == tok.apply_chat_template(
        msgs, tokenize=False
    )


def test_chat_template_prompt_is_prefix_of_full_conversation():
    _, tok = build_tiny_model()
    prompt = [{"role": "system", "content": "s"}, {"role": "user", "content": "⊢ p"}]
    alone = tok.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    full = tok.apply_chat_template(
        [*prompt, {"role": "assistant", "content": "simp"}], tokenize=False
    )
    assert full.startswith(alone) and full[len(alone) :].startswith("simp<|im_end|>")


def test_tiny_model_is_deterministic():
    import torch

    a, _ = build_tiny_model()
    b, _ = build_tiny_model()
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
