"""The per-head table's readers (ag_attention._point.head_readers): files, notes, rotary positions."""

import numpy as np

from ag_attention._point.head_readers import load_head_table
from ag_attention._point.safetensors import write_safetensors
from tests.helpers import generator

E, H = 8, 4


def test_the_reading_s_notes_come_with_the_per_head_table(tmp_path):
    """Ignored tensors, zero biases, and the rotary caveat of q_proj names without a config.json are said in the
    per-head table too (they were only in the full report)."""
    rng = generator(2)
    tensors = {
        f"model.layers.0.self_attn.{r}_proj.weight": ("F32", rng.standard_normal((E, E)).astype("<f4")) for r in "qkvo"
    }
    tensors["model.embed_tokens.weight"] = ("F32", np.ones((5, E), "<f4"))
    path = tmp_path / "llama.safetensors"
    write_safetensors(path, tensors, metadata={"heads": str(H)})
    table = load_head_table(path)
    text = str(table)
    assert "model.embed_tokens.weight" in text and "rotary position embeddings" in text
    assert any("rotary" in n for n in table.to_dict()["notes"])
