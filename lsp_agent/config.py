"""Settings declared once: type, default, editor key, environment variable and description (loaded in settings_sources)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lsp_agent.config_editor import EditorFeatureSettings
from lsp_agent.settings_spec import Spec, setting
from lsp_agent.settings_values import (
    boolean,
    choice,
    infill_template,
    mcp_servers,
    model_list,
    number_between,
    optional_choice,
    optional_positive_int,
    optional_positive_number,
    optional_text,
    pattern_list,
    permission_rules,
    positive_int,
    positive_number,
    text,
    whole_number,
)

TOOL_CALLING_MODES = ("auto", "native", "prompt")
STYLES = ("react", "codeact")
MERGE_SYSTEM_MODES = ("auto", "always", "never")
REASONING_EFFORTS = ("low", "medium", "high")
PROFILES = ("auto", "full", "small")
TEST_BEFORE_FINISH = ("auto", "off")

# Keys of the `lspAgent` section that belong to the editor client (how it starts the server, LSP tracing).
EDITOR_ONLY_PREFIXES = ("server.", "trace.")


@dataclass
class Settings(EditorFeatureSettings):
    """Everything a run, the index and the server can be configured with; each field is declared once here.

    The editor features' settings (inline completion, next edits) are declared in config_editor.py and come first.
    """

    model: str | None = setting(
        None, "model", "litellm model string, e.g. openai/gpt-4o-mini", optional_text, env="LSP_AGENT_MODEL"
    )
    models: list[str] = setting(
        [],
        "models",
        "models to choose from for one ask (the `model` setting stays the default)",
        model_list,
        env="LSP_AGENT_MODELS",
    )
    api_base: str | None = setting(
        None, "apiBase", "API base URL of the model server", optional_text, env="LSP_AGENT_API_BASE"
    )
    reasoning_effort: str | None = setting(
        None,
        "reasoningEffort",
        "reasoning effort of models that take one (litellm's reasoning_effort): low, medium or high",
        optional_choice(REASONING_EFFORTS),
        env="LSP_AGENT_REASONING_EFFORT",
    )
    api_key: str | None = setting(
        None, "apiKey", "API key (else the provider's usual variable)", optional_text, env="LSP_AGENT_API_KEY"
    )
    tool_calling: str = setting(
        "auto",
        "toolCalling",
        "native tool calls, tools described in the prompt, or auto",
        choice(TOOL_CALLING_MODES),
        env="LSP_AGENT_TOOL_CALLING",
    )
    style: str = setting(
        "react", "style", "run style: react or codeact", choice(STYLES), env="LSP_AGENT_STYLE"
    )
    plan: bool = setting(False, "plan", "plan subtasks first, then run them", boolean)
    max_iterations: int = setting(
        30, "maxIterations", "iteration limit of a run", positive_int, env="LSP_AGENT_MAX_ITERATIONS"
    )
    token_budget: int | None = setting(
        None, "tokenBudget", "stop a run past this many tokens", optional_positive_int
    )
    cost_budget: float | None = setting(
        None,
        "costBudget",
        "stop a run past this cost in USD",
        optional_positive_number,
        env="LSP_AGENT_COST_BUDGET",
    )
    daily_token_budget: int | None = setting(
        None,
        "dailyTokenBudget",
        "stop runs once this many tokens were used today (all runs on this machine)",
        optional_positive_int,
        env="LSP_AGENT_DAILY_TOKEN_BUDGET",
    )
    daily_cost_budget: float | None = setting(
        None,
        "dailyCostBudget",
        "stop runs once this much was spent today in USD (all runs on this machine)",
        optional_positive_number,
        env="LSP_AGENT_DAILY_COST_BUDGET",
    )
    context_window: int | None = setting(
        None, "contextWindow", "the model's context window (else litellm's model data)", optional_positive_int
    )
    compaction_threshold: float = setting(
        0.8, "compactionThreshold", "compact past this share of the context window", number_between(0.1, 1.0)
    )
    compaction_summary: bool = setting(
        False, "compactionSummary", "let the model summarise the compacted middle", boolean
    )
    merge_system_prompt: str = setting(
        "auto",
        "mergeSystemPrompt",
        "merge the system prompt into the first user message",
        choice(MERGE_SYSTEM_MODES),
    )
    embeddings: str = setting(
        "none",
        "embeddings",
        "embedding backend: none, local or a litellm embedding model",
        text("'none', 'local' or a litellm embedding model string"),
        env="LSP_AGENT_EMBEDDINGS",
    )
    index_store: str | None = setting(
        None,
        "indexStore",
        "team index: a postgresql:// URL (docs/team-index.md); none: local SQLite only",
        optional_text,
        env="LSP_AGENT_INDEX_STORE",
    )
    index_exclude: list[str] = setting(
        [],
        "index.exclude",
        "extra gitignore-style patterns to leave out",
        pattern_list,
        aliases=("indexExclude",),
    )
    secret_files: list[str] = setting(
        [],
        "secretFiles",
        "gitignore-style patterns of files the agent never reads, searches or writes (extend the built-in ones)",
        pattern_list,
    )
    max_file_size: int = setting(
        1_000_000,
        "index.maxFileSize",
        "skip files larger than this many bytes",
        positive_int,
        aliases=("maxFileSize",),
    )
    permissions: dict[str, str] = setting(
        {},
        "permissions",
        'tool rules: {"tool": "allow" | "deny"} or {"allow": [...], "deny": [...]}',
        permission_rules,
    )
    mcp_servers: dict[str, dict[str, Any]] = setting(
        {}, "mcpServers", "MCP servers: {name: {command, args?, env?} | {url, headers?}}", mcp_servers
    )
    mcp_startup_timeout: float = setting(
        10.0,
        "mcpStartupTimeout",
        "seconds an MCP server may take to start (a server's own startupTimeout wins)",
        positive_number,
        env="LSP_AGENT_MCP_STARTUP_TIMEOUT",
    )
    exec_timeout: float = setting(
        60.0, "execTimeout", "wall-clock limit of code the agent runs (s)", positive_number
    )
    python: str | None = setting(
        None,
        "python",
        "interpreter for run_python/run_tests (default: the workspace venv)",
        optional_text,
        env="LSP_AGENT_PYTHON",
    )
    allow_unisolated_exec: bool = setting(
        False,
        "allowUnisolatedExec",
        "run code even where no sandbox mechanism works (each result says it was not isolated)",
        boolean,
        env="LSP_AGENT_ALLOW_UNISOLATED_EXEC",
    )
    request_timeout: float = setting(
        120.0, "requestTimeout", "limit of one model request (s)", positive_number
    )
    transcript: str | None = setting(
        None, "transcript", "write a JSONL transcript of each run here", optional_text
    )
    max_tokens: int = setting(
        2048,
        "maxTokens",
        "most tokens one model reply may have (a reply cut there ends with finish reason length)",
        positive_int,
        env="LSP_AGENT_MAX_TOKENS",
    )
    stream: bool = setting(
        True,
        "stream",
        "stream model replies (a cancelled or timed-out request then stops the server's work)",
        boolean,
        env="LSP_AGENT_STREAM",
    )
    live_text_interval: int = setting(
        75,
        "liveTextInterval",
        "the editor and the CLI show the model's words as they come, at most one update per this many ms (0: off)",
        whole_number,
        env="LSP_AGENT_LIVE_TEXT_INTERVAL",
    )
    profile: str = setting(
        "auto",
        "profile",
        "prompt and tool profile: full, small (few tools, short prompt, context up front) or auto (small for "
        "models up to 8B, ollama/LM Studio/llamafile and context windows up to 32k)",
        choice(PROFILES),
        env="LSP_AGENT_PROFILE",
    )
    test_before_finish: str = setting(
        "auto",
        "testBeforeFinish",
        "run the tests the task names (or the changed modules' tests) before task_complete; off to skip",
        choice(TEST_BEFORE_FINISH),
        env="LSP_AGENT_TEST_BEFORE_FINISH",
    )
    edit_diagnostics: bool = setting(
        True, "editDiagnostics", "report undefined names in a Python file after each edit", boolean
    )
    repair_lines: int = setting(
        13,
        "repairLines",
        "small profile: before the tool loop, how many requests for sampled one-line fixes, each tested: one per "
        "line the failing tests point at (at most two thirds of maxIterations), then the best lines again while "
        "the loop keeps two steps (0: off)",
        whole_number,
        env="LSP_AGENT_REPAIR_LINES",
    )
    repair_additions: int = setting(
        4,
        "repairAdditions",
        "small profile with an infill template: requests beyond repairLines that add code (a missing line inserted, "
        "a condition's dropped part), while the loop keeps two steps (0: only in place of second requests)",
        whole_number,
        env="LSP_AGENT_REPAIR_ADDITIONS",
    )
    infill_template: str | None = setting(
        "auto",
        "infillTemplate",
        "small profile: the model's fill-in-the-middle prompt (auto: by the model's name, for Qwen2.5-Coder, "
        "CodeGemma, StarCoder, DeepSeek-Coder and Code Llama behind an OpenAI-compatible server; qwen, starcoder, "
        "deepseek, codellama, or a template with {prefix} and {suffix}); set, line repairs first have the model "
        "fill in each line in its place, through the server's text completions, and when several versions "
        "pass, the server's log-probabilities of each in its place break token-count ties (empty: off)",
        infill_template,
        env="LSP_AGENT_INFILL_TEMPLATE",
    )

    def require_model(self, where: str = "cli") -> str:
        """The model string, or ModelNotConfigured with a message saying where to set it."""
        if not self.model:
            raise ModelNotConfigured(where)
        return self.model

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (validated like any other source)."""
        merged, errors = merge_values(self, changes, source="override")
        if errors:
            raise ValueError("; ".join(errors))
        return merged


class ModelNotConfigured(Exception):
    """Raised when a run needs a model and none is set; the message says where to set one."""

    def __init__(self, where: str = "cli") -> None:
        if where == "editor":
            hint = (
                "no model configured: set the `lspAgent.model` setting (e.g. openai/gpt-4o-mini, "
                "anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder) or the LSP_AGENT_MODEL environment variable "
                "(a .env file in the workspace works too)"
            )
        else:
            hint = (
                "no model configured: pass --model (e.g. --model openai/gpt-4o-mini) or set LSP_AGENT_MODEL "
                "(in the environment or a .env file in the workspace)"
            )
        super().__init__(hint)


# The agent's own settings first, then the editor features' (dataclasses list a base class's fields first).
_EDITOR_FIELDS = EditorFeatureSettings.__dataclass_fields__
SPECS: dict[str, Spec] = {
    f.name: f.metadata["spec"]
    for f in sorted(dataclasses.fields(Settings), key=lambda f: f.name in _EDITOR_FIELDS)
}
# Editor key (the documented one first, then aliases) -> field name.
CLIENT_KEYS: dict[str, str] = {spec.key: name for name, spec in SPECS.items()} | {
    alias: name for name, spec in SPECS.items() for alias in spec.aliases
}
# Field name -> the environment variables read for it.
ENV_VARS: dict[str, tuple[str, ...]] = {name: (spec.env,) for name, spec in SPECS.items() if spec.env}


def merge_values(base: Settings, values: Mapping[str, Any], source: str) -> tuple[Settings, list[str]]:
    """Apply field-name keyed values to a copy of base; invalid ones are reported and skipped."""
    changes: dict[str, Any] = {}
    errors: list[str] = []
    for name, raw in values.items():
        spec = SPECS.get(name)
        if spec is None:
            errors.append(f"{source}: unknown setting {name!r}")
            continue
        try:
            changes[name] = spec.parse(raw)
        except ValueError as exc:
            errors.append(f"{source}: setting {name!r} has a bad value {raw!r}: {exc}; using the default")
    return dataclasses.replace(base, **changes), errors
