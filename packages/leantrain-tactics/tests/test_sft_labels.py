"""The SFT rows put loss on the tactic only: checked on TRL's own tokenisation and collator.

A tiny character-level tokenizer with a chat template is built on the fly, a tiny SFTTrainer
(``max_steps=0``) prepares the dataset exactly as training would, and the labels are compared
token by token with the tactic's tokens + EOS.
"""

from __future__ import annotations

import pytest

pytest.importorskip("trl")
torch = pytest.importorskip("torch")

from leantrain.tactics import create_sft_dataset  # noqa: E402

SPECIAL = ["<pad>", "<eos>", "<unk>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}"
    "{% if m['role'] == 'assistant' %}<eos>{% else %}<|end|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def char_tokenizer(texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set("".join(texts)))
    vocab = {t: i for i, t in enumerate(SPECIAL + chars)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    backend.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        additional_special_tokens=SPECIAL[3:],
    )
    tok.chat_template = TEMPLATE
    return tok


@pytest.fixture
def prepared(theorems, tmp_path):
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import SFTConfig, SFTTrainer

    torch.manual_seed(0)
    ds = create_sft_dataset(theorems)
    tok = char_tokenizer([m["content"] for r in ds for m in r["prompt"] + r["completion"]])
    model = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=2048,
        )
    )
    args = SFTConfig(
        output_dir=str(tmp_path / "out"), max_steps=0, bf16=False, report_to=[], max_length=None
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds.to_hf(), processing_class=tok)
    return ds, tok, trainer


def test_labels_are_the_tactic_and_eos_only(prepared):
    ds, tok, trainer = prepared
    train = trainer.train_dataset
    assert len(train) == len(ds)  # no row dropped as "fully masked"
    for i, row in enumerate(ds):
        ex = train[i]
        tactic = row["completion"][0]["content"]
        expected = tok(tactic, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        labels = ex["labels"]
        n_masked = len(labels) - len(expected)
        # every prompt token is masked, every completion token is a label, token by token
        assert labels[:n_masked] == [-100] * n_masked
        assert labels[n_masked:] == expected
        assert ex["input_ids"][n_masked:] == expected
        assert tok.decode(ex["input_ids"][:n_masked]).endswith("<|assistant|>")


def test_collator_keeps_the_mask_and_pads_with_ignore(prepared):
    ds, tok, trainer = prepared
    examples = [trainer.train_dataset[i] for i in range(3)]
    batch = trainer.data_collator(examples)
    for b, ex in enumerate(examples):
        n = len(ex["input_ids"])
        assert batch["labels"][b, :n].tolist() == ex["labels"]
        assert (batch["labels"][b, n:] == -100).all()
        supervised = [t for t in batch["labels"][b].tolist() if t != -100]
        assert tok.decode(supervised) == ds.rows[b]["completion"][0]["content"] + "<eos>"


def test_messages_form_would_train_on_the_prompt(prepared, tmp_path):
    """Why the rows are prompt/completion: TRL trains a `messages` row on every token."""
    import datasets
    from trl import SFTConfig, SFTTrainer

    ds, tok, trainer = prepared
    row = ds.rows[0]
    messages = datasets.Dataset.from_list([{"messages": row["prompt"] + row["completion"]}])
    args = SFTConfig(
        output_dir=str(tmp_path / "m"), max_steps=0, bf16=False, report_to=[], max_length=None
    )
    other = SFTTrainer(model=trainer.model, args=args, train_dataset=messages, processing_class=tok)
    labels = other.train_dataset[0]["labels"]
    assert -100 not in labels  # the system prompt and the state carry loss too
    assert sum(label != -100 for label in trainer.train_dataset[0]["labels"]) < len(labels) / 4


def test_whole_proof_labels_are_the_proof_and_eos_only(theorems, tmp_path):
    """``sft --mode whole``: the prompt is the header and the statement, the loss only on the
    proof (every proof token a label, every other token masked)."""
    from leantrain.tactics.whole_proof import create_whole_proof_sft_dataset
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import SFTConfig, SFTTrainer

    theorems[0] |= {"formal_proof": "by\n  simp [Nat.add_comm]", "header": "import Mathlib"}
    ds = create_whole_proof_sft_dataset(theorems)
    assert ds[0]["prompt"][-1]["content"] == "import Mathlib\n\ntheorem add_comm' : True :="
    # two_steps uses sorry, and again's traced states do not chain to `no goals`: left out
    assert [r["completion"][0]["content"] for r in ds] == ["by\n  simp [Nat.add_comm]"]
    tok = char_tokenizer([m["content"] for r in ds for m in r["prompt"] + r["completion"]])
    model = Qwen2ForCausalLM(
        Qwen2Config(vocab_size=len(tok), hidden_size=16, intermediate_size=32,
                    num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)
    )  # fmt: skip
    args = SFTConfig(
        output_dir=str(tmp_path / "w"), max_steps=0, bf16=False, report_to=[], max_length=None
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)
    assert len(trainer.train_dataset) == len(ds)
    for i, row in enumerate(ds):
        labels = trainer.train_dataset[i]["labels"]
        proof = row["completion"][0]["content"]
        expected = tok(proof, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        n_masked = len(labels) - len(expected)
        assert labels[:n_masked] == [-100] * n_masked and labels[n_masked:] == expected
        prompt_text = tok.decode(trainer.train_dataset[i]["input_ids"][:n_masked])
        assert row["prompt"][-1]["content"] in prompt_text
