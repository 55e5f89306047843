"""Session config options (ACP `configOptions`): the model, the mode and the reasoning effort of a session.

- `model` (category model): the `model` setting and the `models` setting's choices; the pick goes to the next
  request of this session.
- `mode` (category mode): ask, code or plan, the same as the legacy session modes (kept for older clients).
- `reasoning_effort` (category thought_level): offered only for models litellm says support reasoning; the pick
  is passed to the run's completion call as litellm's `reasoning_effort` ("default" sends none, or the
  `reasoningEffort` setting).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from lsp_agent.config import REASONING_EFFORTS

if TYPE_CHECKING:
    from lsp_agent.acp.sessions import AcpSession
    from lsp_agent.config import Settings

log = logging.getLogger(__name__)

MODEL, MODE, EFFORT = "model", "mode", "reasoning_effort"
DEFAULT_EFFORT = "default"
EFFORT_NAMES = {DEFAULT_EFFORT: "Default", "low": "Low", "medium": "Medium", "high": "High"}


def model_choices(settings: Settings) -> list[str]:
    """The models a session may pick: the `model` setting first, then the `models` setting's."""
    return list(dict.fromkeys(m for m in [settings.model, *settings.models] if m))


def supports_reasoning(model: str) -> bool | None:
    """Whether litellm says `model` takes a reasoning effort; None while litellm is not imported yet."""
    from lsp_agent.agent.model.client import get_litellm, litellm_loaded

    if not litellm_loaded():
        return None
    try:
        return bool(get_litellm().supports_reasoning(model=model))
    except Exception as exc:  # noqa: BLE001 - an unknown model takes none
        log.debug("litellm cannot tell whether %s supports reasoning: %s", model, exc)
        return False


def session_model(session: AcpSession, settings: Settings) -> str | None:
    """The model the session's next request goes to: its pick while still offered, else the `model` setting."""
    if session.model and session.model in model_choices(settings):
        return session.model
    return settings.model


def session_settings(session: AcpSession, settings: Settings) -> Settings:
    """The settings of the session's next run: its model and reasoning effort applied."""
    changes: dict[str, Any] = {}
    model = session_model(session, settings)
    if model != settings.model:
        changes["model"] = model
    if session.reasoning_effort in REASONING_EFFORTS and model and supports_reasoning(model) is not False:
        changes["reasoning_effort"] = session.reasoning_effort
    return settings.replace(**changes) if changes else settings


def config_options(session: AcpSession, settings: Settings) -> list[SessionConfigOptionSelect]:
    """The session's options as ACP describes them (no model option while no model is configured)."""
    from lsp_agent.acp.sessions import MODES

    options = []
    model = session_model(session, settings)
    if model:
        options.append(
            _select(
                MODEL,
                "Model",
                "The model this session's next request goes to",
                "model",
                model,
                {m: m for m in model_choices(settings)},
            )
        )
    modes = {key: name for key, (name, _) in MODES.items()}
    options.append(_select(MODE, "Mode", "Ask (read-only), Code or Plan", "mode", session.mode, modes))
    if model and supports_reasoning(model):
        current = session.reasoning_effort or settings.reasoning_effort or DEFAULT_EFFORT
        options.append(
            _select(
                EFFORT,
                "Reasoning effort",
                "How hard the model thinks before it answers",
                "thought_level",
                current,
                EFFORT_NAMES,
            )
        )
    return options


def apply_option(session: AcpSession, settings: Settings, config_id: str, value: Any) -> None:
    """Set one option of the session; ValueError saying what is accepted."""
    from lsp_agent.acp.sessions import MODES

    if not isinstance(value, str):
        raise ValueError(f"{config_id} takes a string value, got {type(value).__name__}")
    if config_id == MODEL:
        choices = model_choices(settings)
        if value not in choices:
            raise ValueError(f"model {value!r} is not offered; pick one of: {', '.join(choices) or '(none)'}")
        session.model = value
    elif config_id == MODE:
        if value not in MODES:
            raise ValueError(f"unknown mode {value!r}; use one of: {', '.join(MODES)}")
        session.mode = value
    elif config_id == EFFORT:
        model = session_model(session, settings)
        if not model or supports_reasoning(model) is False:
            raise ValueError(
                f"the model {model!r} takes no reasoning effort (litellm says it does not reason)"
            )
        if value not in EFFORT_NAMES:
            raise ValueError(f"unknown reasoning effort {value!r}; use one of: {', '.join(EFFORT_NAMES)}")
        session.reasoning_effort = None if value == DEFAULT_EFFORT else value
    else:
        raise ValueError(f"unknown config option {config_id!r}; this agent has: {MODEL}, {MODE}, {EFFORT}")


def _select(
    option_id: str, name: str, description: str, category: str, current: str, choices: dict[str, str]
) -> SessionConfigOptionSelect:
    """One select option (the current value is always among its choices)."""
    if current not in choices:
        choices = {current: current, **choices}
    return SessionConfigOptionSelect(
        id=option_id,
        name=name,
        description=description,
        category=category,
        type="select",
        current_value=current,
        options=[SessionConfigSelectOption(value=v, name=n) for v, n in choices.items()],
    )
