"""Local model directories built from real models' published config values (no download).

vLLM is always run with ``--load-format dummy``, so a directory needs only ``config.json``, a
tokenizer and ``generation_config.json``. The tokenizer is a WordLevel vocabulary of the config's
size, built with the ``tokenizers`` package of the capture environment (this file stays stdlib).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ModelShape:
    """A model directory to write: its name, where the values come from, and its config."""

    name: str
    source: str
    config: dict[str, Any]
    bos_id: int
    eos_id: int
    generation: dict[str, Any] = field(default_factory=dict)
    # How the directory is damaged, as a cut download leaves it: "" (intact), "config-cut"
    # (config.json stops halfway), "safetensors-cut" (model.safetensors whose header is cut).
    damage: str = ""


_LLAMA_COMMON: dict[str, Any] = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_act": "silu",
    "attention_bias": False,
    "attention_dropout": 0.0,
    "mlp_bias": False,
    "initializer_range": 0.02,
    "pretraining_tp": 1,
    "use_cache": True,
    "torch_dtype": "bfloat16",
}

SHAPES: dict[str, ModelShape] = {
    "smollm2-135m-shape": ModelShape(
        name="smollm2-135m-shape",
        source="HuggingFaceTB/SmolLM2-135M config values (dummy weights)",
        config={
            **_LLAMA_COMMON,
            "hidden_size": 576,
            "intermediate_size": 1536,
            "num_hidden_layers": 30,
            "num_attention_heads": 9,
            "num_key_value_heads": 3,
            "head_dim": 64,
            "vocab_size": 49152,
            "max_position_embeddings": 8192,
            "rms_norm_eps": 1e-05,
            "rope_theta": 100000,
            "rope_scaling": None,
            "tie_word_embeddings": True,
            "bos_token_id": 0,
            "eos_token_id": 0,
        },
        bos_id=0,
        eos_id=0,
    ),
    "llama-3.2-1b-shape": ModelShape(
        name="llama-3.2-1b-shape",
        source="meta-llama/Llama-3.2-1B config values (dummy weights)",
        config={
            **_LLAMA_COMMON,
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 16,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 64,
            "vocab_size": 128256,
            "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-05,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 32.0,
                "high_freq_factor": 4.0,
                "low_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
            "tie_word_embeddings": True,
            "bos_token_id": 128000,
            "eos_token_id": 128001,
        },
        bos_id=128000,
        eos_id=128001,
    ),
    "qwen2.5-0.5b-shape": ModelShape(
        name="qwen2.5-0.5b-shape",
        source="Qwen/Qwen2.5-0.5B config values (dummy weights)",
        config={
            "model_type": "qwen2",
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 896,
            "intermediate_size": 4864,
            "num_hidden_layers": 24,
            "num_attention_heads": 14,
            "num_key_value_heads": 2,
            "vocab_size": 151936,
            "max_position_embeddings": 32768,
            "max_window_layers": 24,
            "sliding_window": 32768,
            "use_sliding_window": False,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": True,
            "attention_dropout": 0.0,
            "initializer_range": 0.02,
            "use_cache": True,
            "torch_dtype": "bfloat16",
            "bos_token_id": 151643,
            "eos_token_id": 151643,
        },
        bos_id=151643,
        eos_id=151643,
    ),
    "qwen1.5-0.5b-shape": ModelShape(
        name="qwen1.5-0.5b-shape",
        source="Qwen/Qwen1.5-0.5B config values (dummy weights; dense multi-head, no GQA)",
        config={
            "model_type": "qwen2",
            "architectures": ["Qwen2ForCausalLM"],
            "hidden_act": "silu",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "vocab_size": 151936,
            "max_position_embeddings": 32768,
            "max_window_layers": 21,
            "sliding_window": 32768,
            "use_sliding_window": False,
            "rms_norm_eps": 1e-06,
            "rope_theta": 1000000.0,
            "tie_word_embeddings": True,
            "attention_dropout": 0.0,
            "initializer_range": 0.02,
            "use_cache": True,
            "torch_dtype": "bfloat16",
            "bos_token_id": 151643,
            "eos_token_id": 151643,
        },
        bos_id=151643,
        eos_id=151643,
    ),
    "unknown-arch-shape": ModelShape(
        name="unknown-arch-shape",
        source="SmolLM2-135M config values with an invented architecture name",
        config={
            **_LLAMA_COMMON,
            "architectures": ["FrobnicatorForCausalLM"],
            "hidden_size": 576,
            "intermediate_size": 1536,
            "num_hidden_layers": 30,
            "num_attention_heads": 9,
            "num_key_value_heads": 3,
            "head_dim": 64,
            "vocab_size": 49152,
            "max_position_embeddings": 8192,
            "rms_norm_eps": 1e-05,
            "rope_theta": 100000,
            "tie_word_embeddings": True,
            "bos_token_id": 0,
            "eos_token_id": 0,
        },
        bos_id=0,
        eos_id=0,
    ),
}

_SMOLLM = SHAPES["smollm2-135m-shape"]
SHAPES["smollm2-135m-config-cut"] = ModelShape(
    name="smollm2-135m-config-cut",
    source="SmolLM2-135M config values, config.json cut after half its bytes",
    config=_SMOLLM.config,
    bos_id=0,
    eos_id=0,
    damage="config-cut",
)
SHAPES["smollm2-135m-safetensors-cut"] = ModelShape(
    name="smollm2-135m-safetensors-cut",
    source="SmolLM2-135M config values, model.safetensors cut inside its JSON header",
    config=_SMOLLM.config,
    bos_id=0,
    eos_id=0,
    damage="safetensors-cut",
)


def _damage(target: Path, shape: ModelShape) -> None:
    """Apply ``shape.damage`` to a freshly written directory."""
    if shape.damage == "config-cut":
        cfg = target / "config.json"
        text = cfg.read_bytes()
        cfg.write_bytes(text[: len(text) // 2])
    elif shape.damage == "safetensors-cut":
        header = json.dumps(
            {
                "model.embed_tokens.weight": {
                    "dtype": "BF16",
                    "shape": [49152, 576],
                    "data_offsets": [0, 56623104],
                }
            }
        ).encode()
        # The 8-byte length promises the whole header; the file stops a third of the way in.
        blob = len(header).to_bytes(8, "little") + header[: len(header) // 3]
        (target / "model.safetensors").write_bytes(blob)


# Runs inside the capture environment, which has the `tokenizers` package.
_TOKENIZER_SCRIPT = r"""
import json, sys
from tokenizers import Tokenizer, models, pre_tokenizers
out, size, bos, eos = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
names = {0: "<unk>"}
if bos:
    names[bos] = "<|bos|>"
if eos:
    names[eos] = "<|eos|>"
vocab = {names.get(i, f"tok{i}"): i for i in range(size)}
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=names[0]))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.save(out)
"""


def write_model(shape: ModelShape, root: Path, python: Path) -> Path:
    """Write (or reuse) ``root/<name>`` and return it; ``python`` must import ``tokenizers``."""
    target = root / shape.name
    if (target / "tokenizer.json").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    cfg = dict(shape.config)
    cfg.setdefault("transformers_version", "4.45.0")
    (target / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    gen = {"bos_token_id": shape.bos_id, "eos_token_id": shape.eos_id, **shape.generation}
    (target / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
    bos = "<unk>" if shape.bos_id == 0 else "<|bos|>"
    eos = "<unk>" if shape.eos_id == 0 else "<|eos|>"
    tok_cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": bos,
        "eos_token": eos,
        "unk_token": "<unk>",
        "model_max_length": cfg["max_position_embeddings"],
    }
    (target / "tokenizer_config.json").write_text(json.dumps(tok_cfg, indent=2) + "\n")
    tmp = target / "tokenizer.json.partial"
    subprocess.run(
        [
            str(python),
            "-c",
            _TOKENIZER_SCRIPT,
            str(tmp),
            str(cfg["vocab_size"]),
            str(shape.bos_id),
            str(shape.eos_id),
        ],
        check=True,
    )
    _damage(target, shape)
    tmp.rename(target / "tokenizer.json")
    return target
