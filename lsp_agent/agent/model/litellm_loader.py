"""Loading litellm once, from any thread: the remote price map off, its banners quiet, its logs kept off stdout."""

from __future__ import annotations

import logging
import os
import threading
import warnings
from typing import Any

log = logging.getLogger(__name__)

# A keyless --api-base (llama.cpp, vLLM, LM Studio) gets this: litellm sends no OpenAI request without a key.
PLACEHOLDER_KEY = "sk-no-key-required"

_litellm: Any = None
_litellm_lock = threading.Lock()


def get_litellm() -> Any:
    """Import litellm once (from any thread), with the remote price-map fetch off and its banners quiet."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _litellm_lock:
        if _litellm is not None:
            return _litellm
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        # litellm prepares a request in a worker thread; a request cancelled then (our whole-request timeout,
        # or the user's cancel) leaves its never-started coroutine behind, which is harmless, not news.
        warnings.filterwarnings("ignore", r"coroutine '.*acompletion' was never awaited", RuntimeWarning)
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        _route_litellm_logs()
        # Token counts for compaction use tiktoken; never download Hugging Face tokenizers from an editor.
        litellm.disable_hf_tokenizer_download = True
        _warm_up(litellm)
        _litellm = litellm
    return _litellm


def _route_litellm_logs() -> None:
    """litellm's own log handler writes INFO and DEBUG records to stdout, the protocol channel of `lsp-agent serve`
    and `lsp-agent acp` (--log-level INFO broke both): its records go to our handlers instead (stderr, --log-file)."""
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if type(handler) is not logging.FileHandler and isinstance(handler, logging.StreamHandler):
                logger.removeHandler(handler)
        logger.propagate = True


def litellm_loaded() -> bool:
    """True once litellm was imported (get_litellm then returns at once: no need to call it off the event loop)."""
    return _litellm is not None


def _warm_up(litellm: Any) -> None:
    """Do the first-request work now (lazy imports, pydantic schemas), off the event loop and outside any timeout."""
    try:
        import openai.resources  # noqa: F401 - the OpenAI client loads these on its first request

        litellm.completion(
            model="openai/warm-up",
            messages=[{"role": "user", "content": "warm up"}],
            mock_response="ok",  # answered inside litellm: no request is sent
            api_key=PLACEHOLDER_KEY,
        )
    except Exception as exc:  # noqa: BLE001 - only an optimisation
        log.debug("litellm warm-up failed: %s", exc)
