"""Capture a terminal screenshot of Neovim with the plugin, a real server and the scripted model (needs tmux).

Usage: python editor-clients/neovim/scripts/capture_screenshot.py [OUT.txt]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[1]
REPO = PLUGIN.parents[1]
sys.path.insert(0, str(REPO))

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

GREET = 'def greet(name):\n    return "Hello " + name\n\n\ndef farewell(name):\n    return "Bye " + name\n'
SCRIPT = [
    {
        "content": "The greeting is built by concatenation; an f-string reads better. Reading the file first.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "greet.py"}}],
    },
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {
                    "path": "greet.py",
                    "old_text": 'return "Hello " + name',
                    "new_text": 'return f"Hello, {name}!"',
                },
            }
        ]
    },
    {
        "tool_calls": [
            {
                "name": "task_complete",
                "arguments": {"summary": "greet() builds its greeting with an f-string"},
            }
        ]
    },
]


def tmux(*args: str) -> str:
    """Run a tmux command on the demo socket."""
    return subprocess.run(
        ["tmux", "-L", "lsp-agent-demo", *args], capture_output=True, text=True, check=True
    ).stdout


def main() -> int:
    """Drive a real Neovim in tmux and write what the terminal shows."""
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else PLUGIN / "doc" / "screenshot.txt"
    nvim = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))
    if not nvim or not shutil.which("tmux"):
        print("needs nvim and tmux", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(SCRIPT) as model:
        root = Path(tmp) / "demo"
        (root / ".git").mkdir(parents=True)
        (root / "greet.py").write_text(GREET, encoding="utf-8")
        init = Path(tmp) / "init.lua"
        settings = {"model": "openai/scripted", "apiBase": model.base_url, "apiKey": "test"}
        init.write_text(
            f"vim.opt.rtp:prepend({json.dumps(str(PLUGIN))})\n"
            "vim.cmd('filetype plugin on | syntax on')\n"
            "vim.o.number = true\nvim.o.signcolumn = 'yes'\nvim.o.laststatus = 2\n"
            "vim.o.statusline = '%f %m%=%{v:lua.require(\"lsp_agent\").statusline()} '\n"
            "vim.diagnostic.config({ virtual_text = true })\n"
            "require('lsp_agent').setup({\n"
            f"  cmd = {{ {json.dumps(sys.executable)}, '-m', 'lsp_agent', 'serve' }},\n"
            f"  cmd_env = {{ PYTHONPATH = {json.dumps(str(REPO))}, LITELLM_LOCAL_MODEL_COST_MAP = 'True' }},\n"
            f"  settings = vim.json.decode({json.dumps(json.dumps(settings))}),\n"
            "  transcript_split = 'botright vsplit',\n"
            "})\n",
            encoding="utf-8",
        )
        tmux(
            "new-session",
            "-d",
            "-s",
            "demo",
            "-x",
            "180",
            "-y",
            "26",
            "-c",
            str(root),
            f"{nvim} -u {init} -i NONE greet.py",
        )
        try:
            time.sleep(6)
            tmux("send-keys", "-t", "demo", ":1,2AgentAsk make greet use an f-string", "Enter")
            time.sleep(14)
            tmux("send-keys", "-t", "demo", ":AgentTranscript", "Enter")
            time.sleep(1)
            tmux("send-keys", "-t", "demo", "C-w", "h", "2G", "")
            time.sleep(1)
            frames = [
                "After :1,2AgentAsk make greet use an f-string, then :AgentTranscript",
                tmux("capture-pane", "-p", "-t", "demo"),
            ]
            tmux("send-keys", "-t", "demo", ":lua vim.lsp.buf.code_action()", "Enter")
            time.sleep(2)
            frames += [
                "vim.lsp.buf.code_action() on the hinted line",
                tmux("capture-pane", "-p", "-t", "demo"),
            ]
            tmux("send-keys", "-t", "demo", "1", "Enter")
            time.sleep(2)
            frames += [
                "After choosing 1 (the edit is in the buffer, not yet saved)",
                tmux("capture-pane", "-p", "-t", "demo"),
            ]
            tmux("send-keys", "-t", "demo", ":checkhealth lsp_agent", "Enter")
            time.sleep(3)
            frames += [":checkhealth lsp_agent", tmux("capture-pane", "-p", "-t", "demo")]
            screen = "\n".join(
                f"==== {title} ====\n{frame.rstrip()}\n"
                for title, frame in zip(frames[::2], frames[1::2], strict=True)
            )
        finally:
            subprocess.run(["tmux", "-L", "lsp-agent-demo", "kill-server"], capture_output=True)
    out.write_text(screen.rstrip() + "\n", encoding="utf-8")
    print(screen)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
