"""GGUF models: ``--model file.gguf`` loads a plain, trainable, saveable model, and
``leantrain llm convert`` writes one as a model directory. Every file is a tiny llama written
here with ``gguf.GGUFWriter`` (offline, seconds)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from leantrain.core.cli import main
from leantrain.core.errors import CheckpointError, ConfigError, MissingDependencyError
from leantrain.llm.gguf import find_gguf_file
from leantrain.llm.model_loading import load_model_and_tokenizer
from leantrain.llm.tiny_model import CHAT_TEMPLATE

HIDDEN, HEADS, KV_HEADS, LAYERS, FFN, CONTEXT = 32, 4, 2, 2, 64, 128
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MERGES = ["s i", "si m", "sim p", "Ġ n", "r w", "e x", "ex a", "exa c", "exac t"]
MESSAGES = [{"role": "user", "content": "n : ℕ\n⊢ n + 0 = n"}]


def _byte_alphabet() -> list[str]:
    """GPT-2's printable spelling of the 256 bytes, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    spelling, extra = {}, 0
    for b in range(256):
        if b in printable:
            spelling[b] = chr(b)
        else:
            spelling[b] = chr(256 + extra)
            extra += 1
    return [spelling[b] for b in range(256)]


def _tokens() -> list[str]:
    """Bytes, then one token per merge, then the special tokens (eos ``<|im_end|>``)."""
    return _byte_alphabet() + [m.replace(" ", "") for m in MERGES] + SPECIALS


def _reference_model():
    """A random llama in transformers' layout: what loading the GGUF file must give back."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokens = _tokens()
    config = LlamaConfig(
        vocab_size=len(tokens),
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HIDDEN // HEADS,
        max_position_embeddings=CONTEXT,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        bos_token_id=tokens.index("<|im_start|>"),
        eos_token_id=tokens.index("<|im_end|>"),
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for p in model.parameters():  # far from the init, so every weight matters in the logits
            p.copy_(torch.randn_like(p) * 0.3 + (1.0 if p.ndim == 1 else 0.0))
    return model


def _permute(w, n_head: int):
    """llama.cpp's q/k row order (convert_hf_to_gguf.py), which transformers undoes on load."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def write_tiny_gguf(path: Path, model) -> Path:
    """Write ``model`` (a llama) with a small byte-level BPE tokenizer and ChatML as a GGUF file."""
    import gguf
    import numpy as np

    tokens = _tokens()
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("leantrain-test-llama")
    w.add_context_length(CONTEXT)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_dimension_count(HIDDEN // HEADS)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    normal, control = int(gguf.TokenType.NORMAL), int(gguf.TokenType.CONTROL)
    w.add_token_types([control if t in SPECIALS else normal for t in tokens])
    w.add_token_merges(MERGES)
    w.add_bos_token_id(tokens.index("<|im_start|>"))
    w.add_eos_token_id(tokens.index("<|im_end|>"))
    w.add_chat_template(CHAT_TEMPLATE)
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    names = {
        "input_layernorm": "attn_norm",
        "self_attn.q_proj": "attn_q",
        "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "post_attention_layernorm": "ffn_norm",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
    }
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    for i in range(LAYERS):
        for hf, gg in names.items():
            t = sd[f"model.layers.{i}.{hf}.weight"]
            if gg == "attn_q":
                t = _permute(t, HEADS)
            elif gg == "attn_k":
                t = _permute(t, KV_HEADS)
            w.add_tensor(f"blk.{i}.{gg}.weight", np.ascontiguousarray(t))
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def reference():
    pytest.importorskip("gguf")
    return _reference_model()


@pytest.fixture(scope="module")
def gguf_file(reference, tmp_path_factory) -> Path:
    """A tiny llama GGUF file, alone in its directory."""
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny-llama.F32.gguf", reference)


def _logits(model):
    import torch

    ids = torch.tensor([[3, 17, 200, 256, 260, 100, 5]])
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_load_gives_the_weights_written(reference, gguf_file):
    import torch

    model, tokenizer = load_model_and_tokenizer(gguf_file, dtype=torch.float32)
    assert type(model).__name__ == "LlamaForCausalLM" and model.dtype == torch.float32
    want = reference.state_dict()
    got = model.state_dict()
    assert set(got) == set(want)
    for key in want:
        assert torch.equal(got[key], want[key]), key
    assert torch.equal(_logits(model.eval()), _logits(reference))
    # a plain model: no GGUF quantizer left to block saving or the HF Trainer
    assert getattr(model, "hf_quantizer", None) is None and not model.is_quantized
    assert getattr(model.config, "quantization_config", None) is None
    assert model.config.name_or_path == str(gguf_file)
    # the tokenizer: byte-level BPE with the file's merges, specials whole, ChatML
    assert tokenizer.chat_template == CHAT_TEMPLATE
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token is not None
    assert tokenizer.convert_ids_to_tokens(
        tokenizer.encode("simp exact", add_special_tokens=False)
    ) == [
        "simp",
        "Ġ",
        "exact",
    ]
    text = tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>user\nn : ℕ\n⊢ n + 0 = n<|im_end|>\n<|im_start|>assistant\n"
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert ids[0] == _tokens().index("<|im_start|>")
    assert tokenizer.decode(ids) == text
    # the directory holding just that file names it too
    from_dir, _ = load_model_and_tokenizer(gguf_file.parent, dtype=torch.float32)
    assert torch.equal(_logits(from_dir.eval()), _logits(reference))


def test_loaded_model_trains_and_saves(gguf_file, tmp_path):
    import torch
    from transformers.trainer_utils import validate_quantization_for_training

    model, tokenizer = load_model_and_tokenizer(gguf_file, dtype=torch.float32)
    validate_quantization_for_training(model)  # what the HF Trainer checks first
    model.train()
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    batch = tokenizer(["simp exact rw", "exact simp"], return_tensors="pt", padding=True)
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    loss = model(**batch, labels=labels).loss
    assert torch.isfinite(loss)
    loss.backward()
    optimizer.step()
    changed = [k for k, v in model.named_parameters() if not torch.equal(v, before[k])]
    assert len(changed) == len(before)
    model.save_pretrained(tmp_path / "saved")  # refused while the GGUF quantizer is attached
    assert (tmp_path / "saved" / "model.safetensors").is_file()


def _modes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]
    }


def test_convert_writes_a_plain_model_dir(gguf_file, tmp_path, capsys):
    import torch

    out = tmp_path / "converted"
    old = os.umask(0o022)
    try:
        assert main(["llm", "convert", str(gguf_file), str(out)]) == 0
    finally:
        os.umask(old)
    result = json.loads(capsys.readouterr().out)
    assert result["converted_model"] == str(out) and result["source"] == str(gguf_file)
    assert result["model_type"] == "llama" and result["dtype"] == "float32"
    assert {"model.safetensors", "config.json", "tokenizer.json", ".leantrain"} <= {
        p.name for p in out.iterdir()
    }
    assert not list(out.glob("*.gguf"))
    assert [p.name for p in tmp_path.iterdir()] == ["converted"]  # no temp dir left beside it
    modes = _modes(out)
    for name, mode in modes.items():
        want = 0o755 if (out / name).is_dir() else 0o644
        assert mode == want, f"{name}: {oct(mode)}"
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config

    loaded, _ = load_model_and_tokenizer(gguf_file, dtype=torch.float32)
    reloaded, tokenizer = load_model_and_tokenizer(out, dtype=torch.float32)
    assert torch.equal(_logits(reloaded.eval()), _logits(loaded.eval()))
    assert tokenizer.chat_template == CHAT_TEMPLATE
    assert tokenizer.apply_chat_template(MESSAGES, tokenize=False).startswith("<|im_start|>user\n")

    # an existing, non-empty OUT_DIR is refused, and left as it was
    capsys.readouterr()
    assert main(["llm", "convert", str(gguf_file), str(out)]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and len(err.strip().splitlines()) == 1
    assert _modes(out) == modes


def test_convert_into_an_empty_dir_and_a_failure_leaves_nothing(gguf_file, tmp_path, monkeypatch):
    from leantrain.llm.gguf import convert_gguf

    empty = tmp_path / "empty"
    empty.mkdir()
    assert convert_gguf(gguf_file.parent, empty)["converted_model"] == str(empty)
    assert (empty / "model.safetensors").is_file()

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("leantrain.core.output_dir.write_marker", fail)  # after the weights
    with pytest.raises(OSError, match="disk full"):
        convert_gguf(gguf_file, tmp_path / "half")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


def test_without_the_gguf_package_says_how_to_install(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not read: the missing package is reported first")
    monkeypatch.setitem(sys.modules, "gguf", None)  # `import gguf` fails, find_spec says None
    with pytest.raises(MissingDependencyError, match=r"uv add 'leantrain-llm\[gguf\]'") as e:
        load_model_and_tokenizer(fake)
    assert "pip install gguf" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(MissingDependencyError):
        load_model_and_tokenizer(tmp_path)  # the directory holding it
    assert main(["llm", "convert", str(fake), str(tmp_path / "out")]) == 3
    err = capsys.readouterr().err.strip()
    assert "leantrain-llm[gguf]" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_missing_package_is_reported_before_torch_is_imported(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"")
    code = (
        "import sys; sys.modules['gguf'] = None; from leantrain.core.cli import main;"
        f"rc = main(['llm', 'convert', {str(fake)!r}, {str(tmp_path / 'out')!r}]);"
        "print(rc, any(m in sys.modules for m in ('torch', 'transformers')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["3", "False"]
    assert "uv add 'leantrain-llm[gguf]'" in done.stderr


def test_several_gguf_files_in_a_dir_are_refused(tmp_path, capsys):
    for name in ("a.Q4_0.gguf", "b.Q8_0.gguf"):
        (tmp_path / name).write_bytes(b"")
    with pytest.raises(ConfigError, match=r"a\.Q4_0\.gguf, b\.Q8_0\.gguf.*pass the file itself"):
        load_model_and_tokenizer(tmp_path)
    assert main(["llm", "convert", str(tmp_path), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "several GGUF files" in err and len(err.splitlines()) == 1


def test_what_is_not_a_gguf_model(tmp_path, capsys):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "x.gguf").write_bytes(b"")
    assert find_gguf_file(tmp_path) is None  # a model directory, with a .gguf beside it
    assert find_gguf_file(tmp_path / "config.json") is None
    assert find_gguf_file(tmp_path / "missing.gguf") is None
    with pytest.raises(ConfigError, match="model not found"):
        load_model_and_tokenizer(tmp_path / "missing.gguf")
    assert main(["llm", "convert", str(tmp_path / "config.json"), str(tmp_path / "o")]) == 2
    assert "not a GGUF file" in capsys.readouterr().err
    assert main(["llm", "convert", str(tmp_path / "missing.gguf"), str(tmp_path / "o")]) == 2
    assert "GGUF file not found" in capsys.readouterr().err


def test_a_broken_gguf_file_is_one_line(tmp_path):
    pytest.importorskip("gguf")
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 20)
    with pytest.raises(CheckpointError, match="cannot load the GGUF model") as e:
        load_model_and_tokenizer(bad)
    assert "\n" not in str(e.value)
