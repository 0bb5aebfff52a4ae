"""Pure-numpy forward pass of a BERT sentence-transformers model.

``import sentence_transformers`` costs several seconds, far too much for a one-shot ``explorer
search``. This module reads the same model folder (``config.json``, ``tokenizer.json``,
``model.safetensors``, ``modules.json``, the pooling config) and computes the same embeddings
with numpy alone, matching sentence-transformers to well within 1e-3 per component.
Only numpy and the standard library are imported at module import time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from explorer.core.errors import ExplorerError

_ALLOWED_MODULES = {"Transformer", "Pooling", "Normalize"}
# Abramowitz & Stegun 7.1.26: erf(u) = 1 - (a1 t + ... + a5 t^5) exp(-u^2), t = 1 / (1 + p u),
# max abs error 1.5e-7. Pre-scaled for GELU: u = |x| / sqrt(2) and Phi's factor 1/2 folded in.
_ERF_P = np.float32(0.3275911 / np.sqrt(2.0))
_ERF_A = [
    np.float32(c / 2) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
]  # a5 .. a1, for Horner's scheme
# Per-layer dense and LayerNorm parameters: our name -> name under "encoder.layer.{i}.".
_LAYER_PARTS = {
    "out": "attention.output.dense",
    "ln1": "attention.output.LayerNorm",
    "in": "intermediate.dense",
    "ffn": "output.dense",
    "ln2": "output.LayerNorm",
}
_CONFIG_ERRORS = (OSError, ValueError, KeyError, TypeError, AttributeError, StopIteration)
# Batches up to this many tokens (queries) run with one BLAS thread: their GEMMs are too small to
# gain from a second thread, and on a busy CPU each threaded call waits for a descheduled worker
# (a one-word query measured 40 ms single-threaded against 300 ms and more with two threads).
_SINGLE_THREAD_TOKENS = 256


def _openblas_threads() -> tuple[Any, Any] | None:
    """The (get, set) thread-count functions of numpy's bundled OpenBLAS; None for other BLAS."""
    import ctypes

    for path in sorted((Path(np.__file__).parent.parent / "numpy.libs").glob("*openblas*")):
        try:
            lib = ctypes.CDLL(str(path))  # already loaded by numpy: this only returns its handle
        except OSError:
            continue
        for name in ("scipy_openblas_{}_num_threads64_", "openblas_{}_num_threads64_"):
            if hasattr(lib, name.format("get")) and hasattr(lib, name.format("set")):
                return getattr(lib, name.format("get")), getattr(lib, name.format("set"))
    return None


def _load_weights(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file; float32 ones are memory-mapped, not copied.

    Copying the 90 MB file costs 80-170 ms of a one-shot search; mapping it costs ~2 ms. Files
    holding other dtypes go through the safetensors package.
    """
    import mmap
    import struct

    with path.open("rb") as handle:
        (header_size,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(header_size))
        header.pop("__metadata__", None)
        if any(entry.get("dtype") != "F32" for entry in header.values()):
            from safetensors.numpy import load_file

            return load_file(str(path))
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    base = 8 + header_size
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        flat = np.frombuffer(mapped, dtype="<f4", count=(end - begin) // 4, offset=base + begin)
        tensors[name] = flat.reshape(entry["shape"])
    return tensors


class UnsupportedModel(ExplorerError):
    """The model folder is not a BERT encoder with mean or CLS pooling."""


def _read_json(path: Path) -> Any:
    """Load one JSON file, or an empty dict when it does not exist."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _check(model_dir: Path) -> str | None:
    """Return why ``model_dir`` is unsupported, or None when the numpy encoder can run it."""
    if not (model_dir / "config.json").is_file():
        return "config.json is missing"
    for name in ("tokenizer.json", "model.safetensors"):
        if not (model_dir / name).is_file():
            return f"{name} is missing"
    config = _read_json(model_dir / "config.json")
    if config.get("model_type") != "bert":
        return f"model_type is {config.get('model_type')!r}, not 'bert'"
    if config.get("hidden_act", "gelu") != "gelu":
        return f"hidden_act {config.get('hidden_act')!r} is not 'gelu'"
    if config.get("position_embedding_type", "absolute") != "absolute":
        return "position_embedding_type is not 'absolute'"
    modules = _read_json(model_dir / "modules.json") or []
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if any(kind not in _ALLOWED_MODULES for kind in kinds) or "Pooling" not in kinds:
        return f"modules {kinds} are not Transformer -> Pooling [-> Normalize]"
    pooling_path = next(m.get("path", "") for m in modules if m["type"].endswith("Pooling"))
    pooling = _read_json(model_dir / pooling_path / "config.json")
    modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True)
    if modes not in (["pooling_mode_mean_tokens"], ["pooling_mode_cls_token"]):
        return f"pooling modes {modes} are not exactly mean or cls"
    return None


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in float32."""
    mean = x.mean(axis=-1, keepdims=True)
    centred: np.ndarray = x - mean
    var = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(var + np.float32(eps))
    centred *= weight
    centred += bias
    return centred


def _gelu_block(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU of one cache-sized block, in place: ``0.5 * x * (1 + erf(x / sqrt(2)))``.

    With ``erf(u) = 1 - q(u)`` for ``u >= 0`` (the A&S form), ``x * Phi(x)`` equals
    ``0.5 * (x + |x|) - |x| * q(|x| / sqrt(2)) / 2`` for either sign of ``x``: no branch needed.
    """
    a = np.abs(x)
    t = np.multiply(a, _ERF_P, dtype=np.float32)
    t += np.float32(1.0)
    np.divide(np.float32(1.0), t, out=t)
    q = np.multiply(t, _ERF_A[0])
    for coef in _ERF_A[1:]:
        q += coef
        q *= t
    np.square(a, out=t)
    t *= np.float32(-0.5)
    np.exp(t, out=t)
    q *= t
    q *= a
    x += a
    x *= np.float32(0.5)
    x -= q
    return x


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU in place on a 2-D array, a few rows at a time so temporaries stay in cache."""
    rows = max(1, 32768 // x.shape[1])
    for i in range(0, x.shape[0], rows):
        _gelu_block(x[i : i + rows])
    return x


class NumpyBertEncoder:
    """Pure-numpy forward pass of a BERT sentence-transformers model (fast start, no torch)."""

    @classmethod
    def supports(cls, model_dir: Path) -> bool:
        """Cheap check (config files only) that this encoder can run the model in ``model_dir``."""
        try:
            return _check(Path(model_dir)) is None
        except _CONFIG_ERRORS:
            return False

    def __init__(self, model_dir: Path) -> None:
        """Load tokenizer, weights and configs; raise UnsupportedModel for other architectures."""
        model_dir = Path(model_dir)
        try:
            reason = _check(model_dir)
        except _CONFIG_ERRORS as exc:
            reason = f"unreadable model config: {exc}"
        if reason is not None:
            raise UnsupportedModel(f"{model_dir}: {reason}")
        from tokenizers import Tokenizer

        config = _read_json(model_dir / "config.json")
        modules = _read_json(model_dir / "modules.json")
        pooling_path = next(m.get("path", "") for m in modules if m["type"].endswith("Pooling"))
        pooling = _read_json(model_dir / pooling_path / "config.json")
        st_config = _read_json(model_dir / "sentence_bert_config.json")
        self._cls_pooling = bool(pooling.get("pooling_mode_cls_token"))
        self._normalize = any(m["type"].endswith("Normalize") for m in modules)
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._dim = int(config["hidden_size"])
        limit = int(config.get("max_position_embeddings", 512))
        self._max_len = min(int(st_config.get("max_seq_length") or 256), limit)

        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self._max_len)
        self._tokenizer.no_padding()  # tokenizer.json may pin a fixed length; batches are packed

        raw = _load_weights(model_dir / "model.safetensors")
        w = {
            k.removeprefix("bert."): v.astype(np.float32, copy=False)
            for k, v in raw.items()
            if v.dtype.kind == "f"
        }
        try:
            self._word = w["embeddings.word_embeddings.weight"]
            self._pos = w["embeddings.position_embeddings.weight"]
            self._type0 = w["embeddings.token_type_embeddings.weight"][0]
            self._emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
            self._layers = [
                self._layer(w, f"encoder.layer.{i}.")
                for i in range(int(config["num_hidden_layers"]))
            ]
        except KeyError as exc:
            raise UnsupportedModel(f"{model_dir}: model.safetensors lacks weight {exc}") from None
        self._blas = _openblas_threads()
        if not self._tokenizer.encode("").ids:
            raise UnsupportedModel(f"{model_dir}: tokenizer adds no [CLS]/[SEP] tokens")

    def _layer(self, w: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
        """One encoder layer's weights, matrices transposed to (in, out) for ``x @ W``."""
        layer = {}
        for key, name in _LAYER_PARTS.items():
            weight = w[prefix + name + ".weight"]  # dense matrices are stored (out, in)
            layer[key + "_w"] = weight if key.startswith("ln") else weight.T
            layer[key + "_b"] = w[prefix + name + ".bias"]
        # Query, key and value fused into one GEMM, with the 1/sqrt(d) score scale folded into Q.
        scale = np.float32(1.0 / np.sqrt(self._dim // self._heads))
        att = prefix + "attention.self."
        layer["qkv_w"] = np.concatenate(
            [w[att + "query.weight"] * scale, w[att + "key.weight"], w[att + "value.weight"]]
        ).T.copy()
        layer["qkv_b"] = np.concatenate(
            [w[att + "query.bias"] * scale, w[att + "key.bias"], w[att + "value.bias"]]
        )
        return layer

    @property
    def dimension(self) -> int:
        """Length of each embedding vector."""
        return self._dim

    @property
    def max_seq_length(self) -> int:
        """Tokens per text after truncation, counting [CLS] and [SEP]."""
        return self._max_len

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Embed ``texts`` as a float32 ``(len(texts), dimension)`` array, in input order.

        Each text is truncated to ``max_seq_length`` tokens including [CLS] and [SEP]. A batch is
        run "unpadded": its sequences are packed end to end for the dense layers and attention is
        computed per sequence, which equals padding plus an attention mask without the padding.
        """
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch([str(t) for t in texts])]
        blas = self._blas if sum(map(len, ids)) <= _SINGLE_THREAD_TOKENS else None
        threads = int(blas[0]()) if blas else 1
        if blas is not None and threads != 1:
            blas[1](1)
        try:
            step = max(1, int(batch_size))
            for start in range(0, len(ids), step):
                out[start : start + step] = self._forward(ids[start : start + step])
        finally:
            if blas is not None and threads != 1:
                blas[1](threads)
        if self._normalize:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), np.float32(1e-12))
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """Run BERT and pooling on token-id sequences packed end to end; returns ``(len, dim)``."""
        lengths = np.array([len(seq) for seq in batch])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        tokens = np.concatenate([np.asarray(seq, dtype=np.int64) for seq in batch])
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = self._word[tokens] + self._pos[positions] + self._type0
        x = _layer_norm(x, *self._emb_ln, self._eps)
        ctx = np.empty_like(x)
        eps = self._eps
        for lw in self._layers:
            qkv = x @ lw["qkv_w"]
            qkv += lw["qkv_b"]
            self._attention(qkv, starts.tolist(), lengths.tolist(), ctx)
            x = _layer_norm(ctx @ lw["out_w"] + lw["out_b"] + x, lw["ln1_w"], lw["ln1_b"], eps)
            inner = _gelu(x @ lw["in_w"] + lw["in_b"])
            x = _layer_norm(inner @ lw["ffn_w"] + lw["ffn_b"] + x, lw["ln2_w"], lw["ln2_b"], eps)
        pooled: np.ndarray
        if self._cls_pooling:
            pooled = x[starts]
        else:
            pooled = np.add.reduceat(x, starts, axis=0) / lengths[:, None].astype(np.float32)
        return pooled

    def _attention(
        self, qkv: np.ndarray, starts: list[int], lengths: list[int], ctx: np.ndarray
    ) -> None:
        """Multi-head self-attention of each packed sequence, written into ``ctx`` (tokens, dim)."""
        heads, head_dim = self._heads, self._dim // self._heads
        for s, n in zip(starts, lengths, strict=True):
            q, k, v = qkv[s : s + n].reshape(n, 3, heads, head_dim).transpose(1, 2, 0, 3)
            k_t = k.transpose(0, 2, 1)
            # Query rows go in blocks so each per-head GEMM stays small (m*n*k <= 2**18): OpenBLAS
            # then runs it on one thread, as threaded tiny GEMMs stall badly on a busy CPU.
            rows = max(1, (1 << 18) // (n * head_dim))
            for r in range(0, n, rows):
                scores = q[:, r : r + rows] @ k_t  # (heads, rows, n); Q carries 1/sqrt(d)
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                block = ctx[s + r : s + min(n, r + rows)].reshape(-1, heads, head_dim)
                block[...] = (scores @ v).transpose(1, 0, 2)
