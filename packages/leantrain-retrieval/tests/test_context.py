"""The query text of a proof state (context_format) is the same in training, validation,
evaluation and retrieve, and a long state keeps its goal when it is truncated."""

import json
from dataclasses import replace

import pytest
import torch
from leantrain.core.errors import ConfigError
from leantrain.retrieval import PremiseRetriever, RetrievalConfig, RetrievalDataModule
from leantrain.retrieval.context import format_context, goal_first

LONG = "".join(f"h{i} : x{i} + 0 = x{i}\n" for i in range(30)) + "⊢ Nat.succ_le_of_lt h = zz"


def test_goal_first_moves_the_first_goal_before_its_hypotheses():
    assert goal_first("a : Nat\nh : a = 1\n⊢ a + 0 = 1") == "⊢ a + 0 = 1\na : Nat\nh : a = 1"
    two = "case l\nx : Nat\n⊢ x = x\n\ncase r\ny : Nat\n⊢ y = y"
    assert goal_first(two) == "⊢ x = x\ncase l\nx : Nat\n\ncase r\ny : Nat\n⊢ y = y"
    assert goal_first("⊢ True") == "⊢ True"  # no hypotheses
    assert goal_first("no goal here") == "no goal here"
    assert format_context(LONG, "raw") == LONG


def _tiny(**kw) -> PremiseRetriever:
    torch.manual_seed(0)
    return PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=1, **kw)


def test_truncation_keeps_the_goal_only_with_goal_first(synthetic_export):
    model = _tiny()
    texts = {}
    for fmt in ("goal_first", "raw"):
        dm = RetrievalDataModule(
            synthetic_export, model.tokenizer, context_max_len=48, context_format=fmt
        )
        ids = dm.tokenize_contexts([LONG])["input_ids"][0]
        assert len(ids) == 48
        texts[fmt] = model.tokenizer.decode(ids, skip_special_tokens=True)
    assert "Nat.succ_le_of_lt" in texts["goal_first"] and "⊢" in texts["goal_first"]
    assert "⊢" not in texts["raw"]


@pytest.mark.parametrize("fmt", ["goal_first", "raw"])
def test_validation_and_evaluation_encode_a_state_identically(synthetic_export, fmt):
    """What the model sees in a validation batch equals what encode_contexts (evaluation,
    retrieve) embeds: same format, same truncation, same pooling."""
    model = _tiny(context_max_len=40, context_format=fmt).eval()
    dm = RetrievalDataModule(
        synthetic_export, model.tokenizer, context_max_len=40, context_format=fmt
    )
    dm.setup("fit")
    states = [LONG, *(e.context for e in dm.val_examples[:3])]
    dm.val_examples = [replace(dm.val_examples[0], context=s) for s in states]
    batch = dm.collate_eval([{"example_index": i} for i in range(len(states))])
    with torch.no_grad():
        in_validation = model(batch["context_ids"], batch["context_mask"])
    assert torch.allclose(in_validation, model.encode_contexts(states), atol=1e-5)


def test_context_format_is_saved_and_old_retrievers_reload_as_raw(tmp_path):
    model = _tiny()
    assert model.args.context_format == "goal_first"
    model.save_pretrained(tmp_path / "new")
    assert PremiseRetriever.from_pretrained(tmp_path / "new").args.context_format == "goal_first"
    # a retriever saved before the option existed was trained on raw states
    model.save_pretrained(tmp_path / "old")
    meta_file = tmp_path / "old" / "retriever.json"
    meta = json.loads(meta_file.read_text())
    del meta["context_format"]
    meta_file.write_text(json.dumps(meta))
    assert PremiseRetriever.from_pretrained(tmp_path / "old").args.context_format == "raw"


def test_sample_by_tactic_gives_one_item_per_tactic(synthetic_export):
    model = _tiny()
    dm = RetrievalDataModule(synthetic_export, model.tokenizer, sample_by="tactic")
    dm.setup("fit")
    ds = dm.train_dataset()
    assert len(ds) == len(dm.train_examples)
    pairs = RetrievalDataModule(synthetic_export, model.tokenizer)
    pairs.setup("fit")
    assert len(pairs.train_dataset()) == sum(len(e.positives) for e in pairs.train_examples)
    for i in range(len(ds)):
        item = ds[i]
        assert item["pos"] in item["positives"] and not set(item["negs"]) & set(item["positives"])
    with pytest.raises(ConfigError, match="sample_by"):
        RetrievalDataModule(synthetic_export, model.tokenizer, sample_by="premise")


def test_config_refuses_unknown_choices(tmp_path):
    with pytest.raises(ConfigError, match="context_format"):
        RetrievalConfig(output_dir=str(tmp_path), context_format="goal_last")
    with pytest.raises(ConfigError, match="sample_by"):
        RetrievalConfig(output_dir=str(tmp_path), sample_by="premise")
    with pytest.raises(ConfigError, match="context_format"):
        PremiseRetriever.from_name("tiny", tiny_d_model=32, tiny_layers=1, context_format="x")
