"""CPU options for embedding documents, side by side on the same real chunks.

The nginx docs are chunked by explorer's own chunker (a fixed random sample of files, until
``--chunks`` chunks, each with its heading before it as the indexer embeds it); then the same
texts are embedded by the bundled all-MiniLM-L6-v2 four ways:

- ``fp32``: sentence-transformers as explorer ships it (the reference);
- ``bf16``: the same model under ``torch.autocast("cpu", dtype=torch.bfloat16)``;
- ``onnx``: the transformer exported once to ONNX (in the temp dir) and run by ONNX Runtime
  in fp32, mean pooling and normalising in numpy;
- ``int8``: ``torch.ao.quantization.quantize_dynamic`` of every Linear layer to qint8.

Each option runs ``--rounds`` times, the options interleaved so a busy spell of the shared
machine hits them alike; its best round gives chunks/s. Quality is the cosine between each
chunk's vector and the fp32 one: explorer keeps fp32 unless an option is faster with a minimum
cosine of at least 0.999.

    python benchmarks/cpu_options.py --corpus ../shared/corpora/nginx-docs [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from explorer.core.embed.embedder import SentenceTransformerEmbedder, resolve_model_dir
from explorer.core.ingest.chunker import chunk_file

BATCH = 32
MAX_TOKENS = 256
THRESHOLD = 0.999
"""The minimum cosine to fp32 an option must keep to replace it."""


def sample_chunks(corpus: Path, count: int, seed: int = 13) -> list[str]:
    """``count`` chunk texts of the corpus's Markdown files, as the indexer embeds them."""
    embedder = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    files = sorted(p for p in corpus.rglob("*.md") if p.is_file())
    random.Random(seed).shuffle(files)
    texts: list[str] = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        chunked = chunk_file(path.relative_to(corpus).as_posix(), text, embedder.token_spans)
        for chunk in chunked.chunks:
            texts.append(
                f"{chunk.heading_path}\n{chunk.text}" if chunk.heading_path else chunk.text
            )
            if len(texts) == count:
                return texts
    return texts


def unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def sentence_transformer_option(model, autocast: bool = False) -> Callable[[list[str]], np.ndarray]:
    import torch

    def encode(texts: list[str]) -> np.ndarray:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            vectors = model.encode(
                texts, batch_size=BATCH, convert_to_tensor=True, show_progress_bar=False
            )
        return unit(vectors.float().numpy())

    return encode


def int8_option(model) -> Callable[[list[str]], np.ndarray]:
    import torch

    quantized = torch.ao.quantization.quantize_dynamic(
        copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8
    )
    return sentence_transformer_option(quantized)


def export_onnx(model_dir: Path, target: Path) -> None:
    """The transformer (token ids → last hidden state) as an ONNX graph with dynamic shapes."""
    import torch
    from transformers import AutoModel

    base = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = base

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.base(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]}
    ids = torch.ones((2, 16), dtype=torch.long)
    torch.onnx.export(
        LastHidden(),
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        str(target),
        input_names=names,
        output_names=["last_hidden_state"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )


def onnx_option(model_dir: Path, tokenizer) -> Callable[[list[str]], np.ndarray]:
    import onnxruntime

    target = Path(tempfile.gettempdir()) / "explorer-minilm-l6-fp32.onnx"
    if not target.exists():
        export_onnx(model_dir, target)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    session = onnxruntime.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])

    def encode(texts: list[str]) -> np.ndarray:
        # like sentence-transformers: longest first, so each batch pads little
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            tokens = tokenizer(
                [texts[i] for i in batch],
                padding=True,
                truncation=True,
                max_length=MAX_TOKENS,
                return_tensors="np",
            )
            feed = {name: tokens[name].astype(np.int64) for name in session_inputs(session)}
            hidden = session.run(None, feed)[0]
            mask = tokens["attention_mask"][..., None].astype(np.float32)
            out[batch] = (hidden * mask).sum(axis=1) / mask.sum(axis=1)
        return unit(out)

    return encode


def session_inputs(session) -> list[str]:
    return [node.name for node in session.get_inputs()]


def measure(options: dict[str, Callable], texts: list[str], rounds: int) -> dict[str, dict]:
    for encode in options.values():  # warm every path (thread pools, lazy kernels)
        encode(texts[:BATCH])
    seconds: dict[str, list[float]] = {name: [] for name in options}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for name, encode in options.items():
            started = time.perf_counter()
            vectors[name] = encode(texts)
            seconds[name].append(time.perf_counter() - started)
    reference = vectors["fp32"]
    best_fp32 = min(seconds["fp32"])
    report = {}
    for name in options:
        cosines = np.sum(vectors[name] * reference, axis=1)
        best = min(seconds[name])
        report[name] = {
            "chunks_per_s": round(len(texts) / best, 2),
            "speed_vs_fp32": round(best_fp32 / best, 3),
            "rounds_s": [round(s, 2) for s in seconds[name]],
            "min_cosine": round(float(cosines.min()), 5),
            "median_cosine": round(float(np.median(cosines)), 6),
            "share_below_0.999": round(float(np.mean(cosines < THRESHOLD)), 4),
        }
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="The nginx docs folder.")
    parser.add_argument("--chunks", type=int, default=480, help="How many chunks to embed.")
    parser.add_argument("--rounds", type=int, default=3, help="Timed rounds per option.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"cpu_options.py: error: no folder {args.corpus}", file=sys.stderr)
        return 2
    if args.chunks < BATCH or args.rounds < 1:
        print(f"cpu_options.py: error: --chunks >= {BATCH} and --rounds >= 1", file=sys.stderr)
        return 2

    import torch
    from sentence_transformers import SentenceTransformer

    texts = sample_chunks(args.corpus.resolve(), args.chunks)
    model_dir = resolve_model_dir("all-MiniLM-L6-v2")
    model = SentenceTransformer(str(model_dir), device="cpu")
    options = {
        "fp32": sentence_transformer_option(model),
        "bf16": sentence_transformer_option(model, autocast=True),
        "onnx": onnx_option(model_dir, model.tokenizer),
        "int8": int8_option(model),
    }
    report = measure(options, texts, args.rounds)
    meta = {
        "chunks": len(texts),
        "median_chunk_chars": statistics.median(len(t) for t in texts),
        "rounds": args.rounds,
        "torch_threads": torch.get_num_threads(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if args.json:
        print(json.dumps({**report, "meta": meta}, indent=2))
        return 0
    print(
        f"{meta['chunks']} nginx chunks, {args.rounds} rounds (best), "
        f"{meta['torch_threads']} torch threads, load {meta['load_average']}"
    )
    print(
        f"{'option':<8}{'chunks/s':>10}{'x fp32':>8}{'min cos':>10}{'median cos':>12}{'<0.999':>8}"
    )
    for name, row in report.items():
        print(
            f"{name:<8}{row['chunks_per_s']:>10.1f}{row['speed_vs_fp32']:>8.2f}"
            f"{row['min_cosine']:>10.5f}{row['median_cosine']:>10.5f}"
            f"{row['share_below_0.999']:>8.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
