"""Sentence-transformers model directories (modules.json + Pooling + Normalize) and plain HF
encoder directories, read without the sentence-transformers package. Offline: the models are
tiny BERTs written here, with hand-written sentence-transformers files."""

import json

import pytest
import torch
import torch.nn.functional as F
from leantrain.core.errors import CheckpointError, ConfigError
from leantrain.retrieval import PremiseRetriever
from leantrain.retrieval.encoder import sentence_transformers_pooling
from leantrain.retrieval.index import encoder_fingerprint

TEXTS = ["x : nat ⊢ x", "nat", "x x x nat ⊢"]


def write_bert(d, seed=0):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "nat": 3, "x": 4, "⊢": 5, ":": 6}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]")
    bert = BertModel(
        BertConfig(
            vocab_size=len(vocab),
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
        )
    )
    bert.save_pretrained(d)
    tok.save_pretrained(d)
    return bert.eval(), tok


def write_st(d, *, cls=False, mean=False, max_=False, normalize=True, sub=""):
    """A sentence-transformers directory: the transformer at ``d/sub``, Pooling, [Normalize]."""
    bert, tok = write_bert(d / sub if sub else d)
    modules = [
        {"idx": 0, "name": "0", "path": sub, "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    if normalize:
        modules.append(
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            }
        )
    (d / "modules.json").write_text(json.dumps(modules))
    (d / "1_Pooling").mkdir()
    (d / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "word_embedding_dimension": 32,
                "pooling_mode_cls_token": cls,
                "pooling_mode_mean_tokens": mean,
                "pooling_mode_max_tokens": max_,
                "pooling_mode_mean_sqrt_len_tokens": False,
            }
        )
    )
    (d / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    return bert, tok


def reference(bert, tok, texts, mode, normalize):
    """What sentence-transformers computes, written out by hand."""
    enc = tok(texts, padding="longest", return_tensors="pt")
    with torch.no_grad():
        h = bert(**enc).last_hidden_state
    m = enc["attention_mask"].unsqueeze(-1).float()
    if mode == "cls":
        out = h[:, 0]
    elif mode == "max":
        out = h.masked_fill(m == 0, -1e9).max(1).values
    else:
        out = (h * m).sum(1) / m.sum(1)
    return F.normalize(out, dim=-1) if normalize else out


@pytest.mark.parametrize(
    "mode,normalize", [("mean", True), ("cls", True), ("max", True), ("cls", False)]
)
def test_pooling_and_normalisation_follow_the_sentence_transformers_config(
    tmp_path, mode, normalize
):
    d = tmp_path / "st"
    bert, tok = write_st(
        d, cls=mode == "cls", mean=mode == "mean", max_=mode == "max", normalize=normalize
    )
    st = sentence_transformers_pooling(d)
    assert st["pooling"] == mode and st["normalize"] is normalize and st["max_seq_length"] == 128
    model = PremiseRetriever.from_name(str(d))
    assert (model.pooling, model.normalize) == (mode, normalize)
    got = model.encode_texts(TEXTS)
    assert torch.allclose(got, reference(bert, tok, TEXTS, mode, normalize), atol=1e-5)
    norms = got.norm(dim=-1)
    assert (
        torch.allclose(norms, torch.ones(3), atol=1e-5)
        if normalize
        else not torch.allclose(norms, torch.ones(3), atol=1e-3)
    )
    # the pooling survives save / reload, and changes the index fingerprint
    model.save_pretrained(tmp_path / "saved")
    again = PremiseRetriever.from_pretrained(tmp_path / "saved")
    assert (again.pooling, again.normalize) == (mode, normalize)
    assert torch.allclose(again.encode_texts(TEXTS), got, atol=1e-6)
    plain = PremiseRetriever.from_name(str(d), pooling="mean", normalize=True)
    assert (encoder_fingerprint(plain) == encoder_fingerprint(model)) is (
        (mode, normalize) == ("mean", True)
    )


def test_transformer_in_a_subdirectory_and_concatenated_modes(tmp_path):
    d = tmp_path / "st"
    bert, tok = write_st(d, cls=True, mean=True, sub="0_Transformer")
    model = PremiseRetriever.from_pretrained(d)
    assert model.pooling == "cls+mean" and model.embedding_dim == 64
    got = model.encode_texts(TEXTS)
    enc = tok(TEXTS, padding="longest", return_tensors="pt")
    with torch.no_grad():
        h = bert(**enc).last_hidden_state
    m = enc["attention_mask"].unsqueeze(-1).float()
    want = F.normalize(torch.cat([h[:, 0], (h * m).sum(1) / m.sum(1)], -1), dim=-1)
    assert torch.allclose(got, want, atol=1e-5)


def test_from_pretrained_takes_a_plain_hf_encoder_dir(tmp_path):
    bert, tok = write_bert(tmp_path / "bert")
    model = PremiseRetriever.from_pretrained(tmp_path / "bert", context_max_len=32)
    assert type(model.encoder).__name__ == "BertModel"
    assert (model.pooling, model.normalize, model.args.context_max_len) == ("mean", True, 32)
    assert torch.allclose(
        model.encode_texts(TEXTS), reference(bert, tok, TEXTS, "mean", True), atol=1e-5
    )
    assert torch.equal(
        model.encode_texts(TEXTS),
        PremiseRetriever.from_name(str(tmp_path / "bert")).encode_texts(TEXTS),
    )


def test_from_pretrained_of_a_missing_dir_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="not a directory"):
        PremiseRetriever.from_pretrained(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="neither a registered encoder"):
        PremiseRetriever.from_pretrained(tmp_path / "empty")


def test_unsupported_modules_are_refused_not_ignored(tmp_path):
    d = tmp_path / "st"
    write_st(d, mean=True)
    modules = json.loads((d / "modules.json").read_text())
    modules.append(
        {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}
    )
    (d / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ConfigError, match="Dense"):
        PremiseRetriever.from_name(str(d))


def test_st_model_trains_with_in_batch_negatives(tmp_path, synthetic_export, make_config):
    """The retriever trainer starts from a sentence-transformers directory and keeps its pooling."""
    from leantrain.retrieval import RetrievalTrainer

    d = tmp_path / "st"
    write_st(d, cls=True, normalize=True)
    cfg = make_config(max_steps=2, model_name=str(d), loss="infonce")
    trainer = RetrievalTrainer(cfg)
    trainer.train(synthetic_export)
    assert trainer.retriever.pooling == "cls" and trainer.retriever.normalize
    # in-batch negatives: every context is scored against every premise of the batch
    batch_sim = torch.eye(3) * 0.9 + 0.1
    label = torch.eye(3)
    from leantrain.retrieval import info_nce_loss

    assert info_nce_loss(batch_sim, label, 0.05) < info_nce_loss(batch_sim.flip(1), label, 0.05)
