"""T5 attention with the position-bias mask merged once: same outputs and gradients as
transformers' ``sdpa``, less work, nothing saved in the config."""

import json

import pytest
import torch
from leantrain.retrieval import PremiseRetriever
from leantrain.retrieval.attention import T5_SDPA, use_t5_sdpa
from leantrain.retrieval.encoder import build_tiny_encoder


def _pair():
    torch.manual_seed(0)
    reference, _ = build_tiny_encoder(d_model=32, num_layers=3)
    merged, _ = build_tiny_encoder(d_model=32, num_layers=3)
    merged.load_state_dict(reference.state_dict())
    assert reference.config._attn_implementation == "sdpa"
    assert use_t5_sdpa(merged) and merged.config._attn_implementation == T5_SDPA
    return reference, merged


def _batch():
    ids = torch.randint(3, 250, (5, 40))
    mask = torch.ones_like(ids)
    mask[1, 30:] = 0
    mask[3, 7:] = 0
    return ids, mask


@pytest.mark.parametrize("mode", ["inference", "no_grad"])
def test_outputs_are_identical_to_transformers_sdpa_with_padding(mode):
    reference, merged = _pair()
    ids, mask = _batch()
    ctx = torch.inference_mode if mode == "inference" else torch.no_grad
    with ctx():
        for m in (reference, merged):
            m.eval()
        want = reference(input_ids=ids, attention_mask=mask).last_hidden_state
        got = merged(input_ids=ids, attention_mask=mask).last_hidden_state
        assert torch.equal(got, want)
        # without padding transformers drops the mask: same path as before
        full = torch.ones_like(mask)
        assert torch.equal(
            merged(input_ids=ids, attention_mask=full).last_hidden_state,
            reference(input_ids=ids, attention_mask=full).last_hidden_state,
        )


def test_the_merged_mask_is_built_once_per_forward_not_once_per_layer(monkeypatch):
    reference, merged = _pair()
    ids, mask = _batch()
    where = torch.where
    counts = {}
    for name, m in (("reference", reference), ("merged", merged)):
        calls = []
        monkeypatch.setattr(torch, "where", lambda *a, c=calls, **k: c.append(1) or where(*a, **k))
        with torch.inference_mode():
            m(input_ids=ids, attention_mask=mask)
        counts[name] = len(calls)
    assert counts["reference"] - counts["merged"] == 3 - 1  # one merge instead of one per layer


def test_training_gradients_equal_transformers_sdpa():
    reference, merged = _pair()
    ids, mask = _batch()
    for m in (reference, merged):
        m.train()
        m.zero_grad()
        m(input_ids=ids, attention_mask=mask).last_hidden_state.square().sum().backward()
    for (name, a), (_, b) in zip(
        reference.named_parameters(), merged.named_parameters(), strict=True
    ):
        torch.testing.assert_close(b.grad, a.grad, rtol=1e-5, atol=1e-7, msg=name)


def test_a_retriever_uses_it_and_saves_a_config_that_reloads_without_leantrain(tmp_path):
    torch.manual_seed(0)
    model = PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=2)
    assert model.encoder.config._attn_implementation == T5_SDPA
    model.save_pretrained(tmp_path / "r")
    config = json.loads((tmp_path / "r" / "encoder" / "config.json").read_text())
    assert not any("attn" in key for key in config)
    from transformers import T5EncoderModel

    plain = T5EncoderModel.from_pretrained(tmp_path / "r" / "encoder")
    assert plain.config._attn_implementation == "sdpa"


def test_other_models_are_left_alone():
    from transformers import BertConfig, BertModel

    bert = BertModel(
        BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    )
    assert not use_t5_sdpa(bert)
    assert bert.config._attn_implementation == "sdpa"
    eager, _ = build_tiny_encoder(d_model=32, num_layers=1)
    eager.set_attn_implementation("eager")
    assert not use_t5_sdpa(eager) and eager.config._attn_implementation == "eager"


def test_in_training_too_the_mask_is_merged_once_per_forward_and_nothing_outlives_it(
    monkeypatch,
):
    import gc
    import weakref

    from leantrain.retrieval import attention

    reference, merged = _pair()
    ids, mask = _batch()
    where = torch.where
    counts, results = {}, []
    for name, m in (("reference", reference), ("merged", merged)):
        m.train()
        calls = []

        def counting_where(*a, c=calls, **k):
            out = where(*a, **k)
            c.append(1)
            results.append(weakref.ref(out))
            return out

        monkeypatch.setattr(torch, "where", counting_where)
        m(input_ids=ids, attention_mask=mask).last_hidden_state.sum().backward()
        counts[name] = len(calls)
    monkeypatch.setattr(torch, "where", where)
    assert counts["reference"] - counts["merged"] == 3 - 1
    assert attention._FORWARD.get() is None  # the scope closed with the forward
    gc.collect()
    assert all(r() is None for r in results)  # no merged mask kept once the graph is freed


def test_a_forward_that_fails_closes_its_scope(monkeypatch):
    from leantrain.retrieval import attention

    _, merged = _pair()
    ids, mask = _batch()

    def failing(*a, **k):
        raise RuntimeError("injected")

    monkeypatch.setattr(attention, "sdpa_attention_forward", failing)
    with pytest.raises(RuntimeError, match="injected"):
        merged(input_ids=ids, attention_mask=mask)
    assert attention._FORWARD.get() is None
