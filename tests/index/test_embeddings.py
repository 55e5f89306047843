"""Dense vectors through litellm's real HTTP path (a local OpenAI-compatible embeddings server) and RRF fusion."""

from __future__ import annotations

import base64
import json
import re
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.embeddings import EmbeddingError, make_embedder

DIM = 512
# The "model" knows that these words mean the same thing, which BM25 cannot know.
CONCEPTS = {"automobile": "car", "vehicle": "car", "car": "car", "motorcar": "car"}


def _vector(text: str) -> list[float]:
    vec = np.zeros(DIM, dtype=np.float32)
    for word in re.findall(r"[a-z]+", text.lower()):
        vec[zlib.crc32(CONCEPTS.get(word, word).encode()) % DIM] += 1.0
    return vec.tolist()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.server.inputs.extend(inputs)  # type: ignore[attr-defined]
        data = []
        for i, text in enumerate(inputs):
            vec = _vector(text)
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(np.array(vec, dtype=np.float32).tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": vec})
        reply = json.dumps(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def embed_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.inputs = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _config(server: ThreadingHTTPServer) -> IndexConfig:
    host, port = server.server_address[:2]
    return IndexConfig(embeddings="openai/test-embed", api_base=f"http://{host}:{port}/v1", api_key="test")


def test_vectors_fused_with_bm25_and_recomputed_only_for_changed_chunks(
    shop_repo: Path, embed_server: ThreadingHTTPServer
) -> None:
    (shop_repo / "shop" / "garage.py").write_text(
        "def park_motorcar(spot):\n    return spot\n\n\ndef wash_bicycle(bike):\n    return bike\n"
    )
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        stats = index.refresh()
        first_inputs = len(embed_server.inputs)
        assert first_inputs >= stats.chunks - 2  # one vector per distinct chunk text
        # "automobile" shares no token with park_motorcar; only the vectors connect them.
        hits = index.search("automobile", top_k=3)
        assert hits and hits[0].symbol == "park_motorcar"

        garage = shop_repo / "shop" / "garage.py"
        garage.write_text(garage.read_text().replace("return bike", "return bike.clean()"))
        embed_server.inputs.clear()
        assert index.refresh().parsed == 1
        # Only the edited function's text changed, so only it is embedded again (plus the query above: none).
        assert len(embed_server.inputs) == 1 and "wash_bicycle" in embed_server.inputs[0]

    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:  # vectors persist
        embed_server.inputs.clear()
        assert index.refresh().parsed == 0
        hits = index.search("automobile vehicle", top_k=3)
        assert hits[0].symbol == "park_motorcar"
        assert embed_server.inputs == ["automobile vehicle"]  # only the query was embedded


def test_unreachable_embedding_model_is_a_clear_error() -> None:
    embedder = make_embedder("openai/test-embed", api_base="http://127.0.0.1:9/v1", api_key="test")
    assert embedder is not None
    with pytest.raises(EmbeddingError, match="test-embed"):
        embedder.embed(["hello"])
    assert make_embedder("none") is None
