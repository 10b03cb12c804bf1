"""Fast batched encoding: same ids as the tokenizer, same embeddings as one row at a time."""

import numpy as np
import pytest
import torch
from leantrain.retrieval import PremiseRetriever
from leantrain.retrieval.encoding import (
    length_batches,
    tokenize_all,
    use_bf16,
)

TEXTS = [
    "x : ℕ\n⊢ x + 0 = x",
    "⊢ a = b",
    "theorem foo (h : a < b) : b > a",
    "s : Set α\n⊢ s ∩ ∅ = ∅ ∧ ∀ x ∈ s, x ∉ ∅" * 3,
    "",
    "a literal </s> and <extra_id_3> inside",
    "𝓝 x ≤ 𝓝 y",
]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return PremiseRetriever.from_name(
        "tiny", tiny_d_model=32, tiny_layers=1, context_max_len=48, premise_max_len=48
    )


def test_byt5_ids_equal_the_tokenizers_including_truncation_and_special_tokens(model):
    for max_len in (48, 8):
        fast = tokenize_all(model.tokenizer, TEXTS, max_len)
        slow = model.tokenizer(TEXTS, truncation=True, max_length=max_len)["input_ids"]
        assert [row.tolist() for row in fast] == slow


def test_length_batches_cover_every_row_once_sorted_under_the_token_budget():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 300, size=1000)
    batches = length_batches(lengths, 16)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(1000))
    assert all(lengths[b].tolist() == sorted(lengths[b].tolist()) for b in batches)
    budget = 16 * int(lengths.max())
    for b in batches[:-1]:
        assert 16 <= len(b) <= 128 and len(b) * int(lengths[b].max()) <= budget
    assert len(batches[0]) > len(batches[-2])  # short rows travel in larger batches
    assert length_batches([], 4) == []


def test_rows_cut_at_the_maximum_length_are_batched_apart_without_padding():
    lengths = [256, 40, 256, 255, 256, 12, 256, 256]
    batches = length_batches(lengths, 64, full=256)
    assert [sorted(b.tolist()) for b in batches] == [[1, 3, 5], [0, 2, 4, 6, 7]]
    assert len(length_batches(lengths, 64)) == 1  # without ``full`` they share one batch
    assert len(length_batches([256] * 5, 2, full=256)) == 3  # the budget still applies


def test_encode_texts_matches_one_row_at_a_time_in_input_order(model):
    batched = model.encode_texts(TEXTS, batch_size=3, precision="fp32")
    single = torch.cat([model.encode_texts([t], batch_size=1, precision="fp32") for t in TEXTS])
    cut = model.encode_texts(TEXTS, max_len=16, batch_size=4, precision="fp32")  # most at the cut
    cut_single = torch.cat([model.encode_texts([t], max_len=16, batch_size=1) for t in TEXTS])
    assert torch.allclose(cut, cut_single, atol=1e-5)
    assert batched.dtype == torch.float32 and batched.shape == (len(TEXTS), model.embedding_dim)
    assert torch.allclose(batched, single, atol=1e-5)
    assert not batched.is_inference()  # usable where autograd records (training validation)
    assert model.encode_texts([]).shape == (0, model.embedding_dim)


def test_bf16_encoding_stays_close_to_fp32(model):
    fp32 = model.encode_texts(TEXTS, precision="fp32")
    bf16 = model.encode_texts(TEXTS, precision="bf16")
    assert bf16.dtype == torch.float32
    assert torch.nn.functional.cosine_similarity(fp32, bf16).min() > 0.99


def test_precision_choice(monkeypatch):
    cpu = torch.device("cpu")
    assert use_bf16(cpu, "fp32") is False and use_bf16(cpu, "bf16") is True
    assert use_bf16(cpu, "auto") is False  # exact fp32 on a CPU unless asked
    monkeypatch.setenv("LEANTRAIN_ENCODE_PRECISION", "fp32")
    assert use_bf16(cpu) is False
    with pytest.raises(ValueError, match="precision must be one of"):
        use_bf16(cpu, "fp16")


def test_gelu_new_is_fused_with_the_same_outputs_and_an_unchanged_config(tmp_path):
    from leantrain.retrieval.encoder import build_tiny_encoder, fuse_activations
    from transformers.activations import GELUTanh, NewGELUActivation

    torch.manual_seed(0)
    encoder, tokenizer = build_tiny_encoder(d_model=32, num_layers=2)
    assert sum(type(m) is NewGELUActivation for m in encoder.modules()) == 2
    ids = torch.randint(3, 250, (3, 40))
    mask = torch.ones_like(ids)
    with torch.no_grad():
        before = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    model = PremiseRetriever(encoder, tokenizer)  # fuses in place
    assert not any(type(m) is NewGELUActivation for m in encoder.modules())
    assert sum(type(m) is GELUTanh for m in encoder.modules()) == 2
    assert fuse_activations(encoder) == 0  # idempotent
    with torch.no_grad():
        after = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-6)
    assert encoder.config.feed_forward_proj == "gated-gelu"  # saved as before
    model.save_pretrained(tmp_path / "r")
    reloaded = PremiseRetriever.from_pretrained(tmp_path / "r")
    torch.testing.assert_close(
        reloaded.encode_texts(TEXTS, max_len=48), model.encode_texts(TEXTS, max_len=48)
    )
