"""docs/configuration.md, generated from the declarations (`python -m lsp_agent config --markdown`)."""

from __future__ import annotations

from lsp_agent.cli.config import toml_value
from lsp_agent.config import SPECS, Settings
from lsp_agent.config_files import GUARDED, SERVER_REASON, TRUST_KEY, UNHIDE_REASON
from lsp_agent.settings_sources import PRECEDENCE

REGENERATE = "python -m lsp_agent config --markdown > docs/configuration.md"

HEADER = f"""# Configuration

<!-- Generated from lsp_agent/config.py: do not edit by hand. Regenerate with
     {REGENERATE}
     (tests/config/test_config_docs.py fails while this page is stale). -->

Every setting has one name everywhere: its editor key. Set it in a config file (`maxIterations = 5`), in your
editor's `lspAgent` settings (`"lspAgent.maxIterations": 5`), as an environment variable where it has one
(`LSP_AGENT_MAX_ITERATIONS=5`) or, for some, as a flag (`lsp-agent ask --max-iterations 5`). The CLI, the
language server (`lsp-agent serve`) and ACP (`lsp-agent acp`) read the same sources.

```bash
lsp-agent config                 # every setting, its value and where it came from (like git config --show-origin)
lsp-agent config --check         # validate every source and MCP server entry (mcp.json too); exit 1 on a problem
lsp-agent config --json          # the same as JSON (secrets masked)
lsp-agent config --trust         # trust this workspace (see Workspace trust)
```

## The config files

| file | where |
|---|---|
| user | `$XDG_CONFIG_HOME/lsp-agent/config.toml` (`~/.config/lsp-agent/config.toml`; macOS `~/Library/Application Support/lsp-agent/config.toml`) |
| workspace | `<workspace>/.lsp-agent/config.toml` |

TOML, every setting under its editor key; nested keys as tables or dotted keys:

```toml
model = "openai/qwen2.5-coder-7b"
apiBase = "http://127.0.0.1:8080/v1"
contextWindow = 16384
maxIterations = 20
mcpStartupTimeout = 30
index.exclude = ["*.min.js", "vendor/"]
trustedWorkspaces = ["~/src/mine"]     # user file only: see Workspace trust

[permissions]                         # user file (or a trusted workspace)
allow = ["run_tests", "files__*"]
deny = ["run_command"]

[mcpServers.files]                    # user file (or a trusted workspace)
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "${{workspaceFolder}}"]
startupTimeout = 60                   # this server's own; mcpStartupTimeout is for every server
```

A bad value is reported with the file and the key (`~/.config/lsp-agent/config.toml: maxIterations = -2:
expected a positive whole number`) and the next source's value applies; a file that is not valid TOML is
reported with its line and ignored. The CLI prints these as warnings, the language server shows them as a
message, ACP logs them.

When a change takes effect: the CLI reads the files at each command, ACP at each prompt (its MCP servers at
each new or loaded session), the language server at start, when the editor's settings change and when the
workspace's `config.toml` or `.env` changes (watched files); after editing your user file, restart it (or
change any editor setting).
"""

TRUST = f"""
## Workspace trust

A workspace's files (`.lsp-agent/config.toml`, `.env` and `.lsp-agent/mcp.json`) come with the repository, so
anyone who wrote the repository wrote them. They cannot grant the agent power on their own: these settings are
taken from them only in a workspace you trust, and refused with a message otherwise:

{{guarded}}

Trust a workspace (and every folder below it) in your user file, like VS Code's workspace trust, by hand or
with `lsp-agent config --trust [--repo PATH]` (which adds the path and keeps the rest of the file):

```toml
{TRUST_KEY} = ["~/src/my-project", "/work/company"]
```

`lsp-agent config` says whether the current workspace is trusted. Settings from your editor, the environment
and flags are yours and need no trust (VS Code's own workspace trust governs `.vscode/settings.json`).
"""

MCP_KEYS = """
## MCP servers

`mcpServers` entries (in a config file, the editor settings or `mcp.json`):

| key | meaning |
|---|---|
| `command`, `args`, `env`, `cwd` | a stdio server |
| `url`, `headers`, `type` (`http` or `sse`) | a streamable HTTP (or legacy SSE) server |
| `startupTimeout` | seconds it may take to start (default: `mcpStartupTimeout`, 10 s) |
| `toolTimeout` | seconds one tool call may take (default 60 s) |
| `disabled` | `true` leaves it out |

`lsp-agent ask --mcp-server URL_OR_COMMAND` servers and those an ACP client passes in `session/new` get
`mcpStartupTimeout`.
"""


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _default(name: str) -> str:
    """The declared default, as it would be written in a config file."""
    value = getattr(Settings(), name)
    return "unset" if value is None else f"`{_cell(toml_value(value))}`"


def settings_table() -> str:
    """One row per setting: editor key, environment variable, default, who may set it, description."""
    rows = [
        "| key | environment variable | default | workspace file | description |",
        "|---|---|---|---|---|",
    ]
    for name, spec in SPECS.items():
        key = f"`{spec.key}`" + "".join(f" (or `{alias}`)" for alias in spec.aliases)
        env = f"`{spec.env}`" if spec.env else ""
        where = "trusted only" if name in GUARDED else "yes"
        where = "yes (`!` patterns: trusted only)" if name == "secret_files" else where
        rows.append(f"| {key} | {env} | {_default(name)} | {where} | {_cell(spec.doc)} |")
    rows.append(
        f"| `{TRUST_KEY}` | | `[]` | no (user file only) | workspaces whose files may set the guarded settings |"
    )
    return "\n".join(rows) + "\n"


def precedence_table() -> str:
    """Settings_sources.PRECEDENCE as a Markdown table, highest first."""
    rows = ["| | source | where | note |", "|---|---|---|---|"]
    rows += [
        f"| {i} | {source} | {where} | {note} |" for i, (source, where, note) in enumerate(PRECEDENCE, 1)
    ]
    return "\n".join(rows) + "\n"


def reference_page() -> str:
    """The whole page: how to set settings, the files, precedence, trust, MCP entries, every setting."""
    guarded = "\n".join(f"- `{SPECS[name].key}`: {why}" for name, why in GUARDED.items())
    guarded += f"\n- `secretFiles` patterns starting with `!`: each {UNHIDE_REASON} (the others apply)"
    guarded += f"\n- `OPENAI_API_BASE`, `*_API_BASE`, `*_BASE_URL` in `.env`: each {SERVER_REASON}"
    guarded += "\n- MCP servers from `.lsp-agent/mcp.json`: they start programs"
    precedence = (
        "\n## Where a value comes from\n\nHighest first; the first source that sets a setting wins:\n\n"
        + precedence_table()
        + "\nLocal beats global (the workspace's files over your user file, as git's local config beats its\n"
        "global one) and the environment beats files (as `GIT_*` variables beat git's config). `permissions`\n"
        "and `mcpServers` merge by entry: a higher source replaces an entry of the same name, the others stay.\n"
    )
    return (
        HEADER
        + precedence
        + TRUST.format(guarded=guarded)
        + MCP_KEYS
        + "\n## Every setting\n\n"
        + settings_table()
    )
