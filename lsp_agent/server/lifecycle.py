"""What the lifecycle handlers do beyond a line: pull the editor's settings, register file watchers, reload the
settings (reindexing when an index setting changed), and import the model library before the first ask."""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

from lsp_agent.server.client_requests import request_within
from lsp_agent.server.indexing import index_config_key
from lsp_agent.server.runs import load_agent_core
from lsp_agent.server.server import SECTION

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)

WATCH_REGISTRATION_ID = "lsp-agent/watched-files"
CLIENT_REQUEST_SECONDS = 5

_prewarm_started = threading.Event()


def reload_settings_and_index(ls: AgentServer) -> None:
    """Reload the settings; reindex when one the index depends on changed."""
    before = index_config_key(ls.settings)
    ls.reload_settings()
    if index_config_key(ls.settings) != before:
        ls.indexes.reindex()


async def pull_configuration(ls: AgentServer) -> None:
    """workspace/configuration for the `lspAgent` section, when the client supports it."""
    if not ls.supports_configuration():
        return
    try:
        result = await request_within(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            ),
            CLIENT_REQUEST_SECONDS,
        )
    except Exception as exc:
        log.info("workspace/configuration failed: %s", exc)
        return
    if result and isinstance(result[0], dict):
        ls.client_config = dict(result[0])


async def watch_files(ls: AgentServer) -> None:
    """Register workspace/didChangeWatchedFiles dynamically when the client allows it."""
    ws = ls.client_capabilities.workspace
    watched = ws.did_change_watched_files if ws else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
    )
    registration = types.Registration(
        id=WATCH_REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    try:
        await request_within(
            ls.client_register_capability_async(types.RegistrationParams(registrations=[registration])),
            CLIENT_REQUEST_SECONDS,
        )
    except Exception as exc:
        log.info("registering file watchers failed: %s", exc)


def prewarm_model_library(ls: AgentServer) -> None:
    """Import litellm in a daemon thread once a model is configured, so the first ask does not wait ~5 s."""
    if not ls.settings.model or _prewarm_started.is_set() or os.environ.get("LSP_AGENT_NO_PREWARM"):
        return
    _prewarm_started.set()

    def warm() -> None:
        try:
            load_agent_core()
        except Exception:
            log.exception("pre-importing the agent core failed")

    threading.Thread(target=warm, name="lsp-agent-prewarm", daemon=True).start()
