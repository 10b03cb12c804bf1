import pytest
import torch
from leantrain.retrieval import PremiseRetriever, info_nce_loss, mse_similarity_loss


def test_mse_loss_is_reprovers():
    sim = torch.tensor([[0.9, 0.1], [0.2, 0.5]])
    label = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    assert mse_similarity_loss(sim, label).item() == pytest.approx(
        ((0.1**2) + 0.1**2 + 0.2**2 + 0.5**2) / 4
    )


def test_infonce_masks_other_positives_instead_of_pushing_them_away():
    label = torch.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    a = torch.tensor([[0.5, 0.9, 0.1], [0.1, 0.8, 0.2]])
    b = a.clone()
    b[0, 1] = -0.9  # changing a masked (other-positive) column must not change the loss
    assert info_nce_loss(a, label).item() == pytest.approx(info_nce_loss(b, label).item())
    c = a.clone()
    c[0, 2] = 0.9  # a higher negative raises it
    assert info_nce_loss(c, label) > info_nce_loss(a, label)


def test_embeddings_are_normalised_and_padding_does_not_matter():
    torch.manual_seed(0)
    model = PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=1)
    texts = ["⊢ a + b = b + a", "a much longer premise text " * 3]
    e1 = model.encode_texts(texts[:1], precision="fp32")
    e2 = model.encode_texts(texts, precision="fp32")[:1]
    assert torch.allclose(e1.norm(dim=-1), torch.ones(1), atol=1e-5)
    assert torch.allclose(e1, e2, atol=1e-5)
    # bf16 autocast (the default on CPUs with native bf16): the same up to bf16 rounding
    b1 = model.encode_texts(texts[:1], precision="bf16")
    b2 = model.encode_texts(texts, precision="bf16")[:1]
    assert torch.allclose(b1, b2, atol=2e-2) and torch.allclose(b1, e1, atol=2e-2)


def test_save_and_reload_gives_identical_embeddings_and_tokenizer(tmp_path):
    torch.manual_seed(0)
    model = PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=2, context_max_len=77)
    texts = ["x : Nat\n⊢ x + 0 = x", "theorem Nat.add_zero (n : Nat) : n + 0 = n"]
    before = model.encode_texts(texts)
    model.save_pretrained(tmp_path / "m")
    assert not list((tmp_path / "m").rglob("*.bin")) and not list((tmp_path / "m").rglob("*.pt"))
    again = PremiseRetriever.from_pretrained(tmp_path / "m")
    assert type(again.tokenizer).__name__ == "ByT5Tokenizer"
    assert again.tokenizer(texts[0])["input_ids"] == model.tokenizer(texts[0])["input_ids"]
    assert again.tokenizer(texts[0])["input_ids"][:3] == [x + 3 for x in texts[0].encode()[:3]]
    assert again.args.context_max_len == 77
    assert torch.equal(again.encode_texts(texts), before)
    # the saved encoder is a plain HF directory
    from transformers import T5EncoderModel

    enc = T5EncoderModel.from_pretrained(tmp_path / "m" / "encoder")
    assert enc.config.d_model == 32


def test_any_local_hf_encoder_with_its_own_tokenizer(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    vocab = {"[PAD]": 0, "[UNK]": 1, "nat": 2, "x": 3, "⊢": 4}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]")
    bert = BertModel(
        BertConfig(
            vocab_size=5,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
        )
    )
    bert.save_pretrained(tmp_path / "bert")
    tok.save_pretrained(tmp_path / "bert")
    model = PremiseRetriever.from_name(str(tmp_path / "bert"))
    assert type(model.encoder).__name__ == "BertModel" and model.embedding_dim == 32
    emb = model.encode_texts(["x : nat ⊢ x", "nat"])
    model.save_pretrained(tmp_path / "saved")
    again = PremiseRetriever.from_pretrained(tmp_path / "saved")
    assert type(again.tokenizer) is type(model.tokenizer)
    assert torch.equal(again.encode_texts(["x : nat ⊢ x", "nat"]), emb)


def test_unknown_encoder_name_is_a_clear_error(tmp_path):
    from leantrain.core.errors import ConfigError

    with pytest.raises(ConfigError, match="neither a registered encoder"):
        PremiseRetriever.from_name(str(tmp_path / "no-such-model"))
