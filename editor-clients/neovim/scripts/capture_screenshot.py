"""Capture a terminal screenshot of Neovim with the plugin, a real server and the scripted model (needs tmux).

Usage: python editor-clients/neovim/scripts/capture_screenshot.py [OUT.txt] [--svg DIR]

OUT.txt (default neovim/doc/screenshot.txt) gets every frame as plain text. With --svg (needs `rich`:
`pip install -e '.[docs]'`), DIR gets each frame in colour as an SVG drawn from tmux's own record of the
terminal cells (`capture-pane -e`): neovim-ask.svg, neovim-code-action.svg, neovim-applied.svg, neovim-health.svg.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


FRAME_FILES = ("neovim-ask.svg", "neovim-code-action.svg", "neovim-applied.svg", "neovim-health.svg")


def wait_for(ready: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll until `ready()` holds; fail with `what` after `seconds` (a loaded machine starts the server slowly)."""
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise SystemExit(f"capture_screenshot: timed out waiting for {what}")
        time.sleep(0.25)


def capture() -> tuple[str, str]:
    """The pane as plain text and with its colours as ANSI escapes."""
    return tmux("capture-pane", "-p", "-t", "demo"), tmux("capture-pane", "-p", "-e", "-t", "demo")


def write_svgs(folder: Path, titles: list[str], coloured: list[str]) -> None:
    """Render each coloured frame as an SVG terminal picture with rich."""
    from rich.console import Console
    from rich.text import Text

    folder.mkdir(parents=True, exist_ok=True)
    for name, title, frame in zip(FRAME_FILES, titles, coloured, strict=True):
        console = Console(
            record=True, width=180, color_system="truecolor", force_terminal=True, file=io.StringIO()
        )
        for line in frame.rstrip("\n").split("\n"):
            console.print(Text.from_ansi(line), no_wrap=True, overflow="crop")
        console.save_svg(str(folder / name), title=f"Neovim + lsp-agent: {title}")
        print(f"wrote {folder / name}", file=sys.stderr)


def parse_args(argv: list[str]) -> tuple[Path, Path | None]:
    """The text output path and the SVG folder (None: no SVGs)."""
    svg = None
    if "--svg" in argv:
        at = argv.index("--svg")
        svg = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    return (Path(argv[0]) if argv else PLUGIN / "doc" / "screenshot.txt"), svg


def main() -> int:
    """Drive a real Neovim in tmux and write what the terminal shows."""
    out, svg_dir = parse_args(sys.argv[1:])
    nvim = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))
    if not nvim or not shutil.which("tmux"):
        print("needs nvim and tmux", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(SCRIPT) as model:
        root = Path(tmp) / "demo"
        (root / ".git").mkdir(parents=True)
        (root / "greet.py").write_text(GREET, encoding="utf-8")
        init, attached = Path(tmp) / "init.lua", Path(tmp) / "attached"
        settings = {"model": "openai/scripted", "apiBase": model.base_url, "apiKey": "test"}
        init.write_text(
            f"vim.opt.rtp:prepend({json.dumps(str(PLUGIN))})\n"
            "vim.cmd('filetype plugin on | syntax on')\n"
            "vim.o.number = true\nvim.o.signcolumn = 'yes'\nvim.o.laststatus = 2\nvim.o.termguicolors = true\n"
            "vim.o.statusline = '%f %m%=%{v:lua.require(\"lsp_agent\").statusline()} '\n"
            "vim.diagnostic.config({ virtual_text = true })\n"
            "vim.api.nvim_create_autocmd('LspAttach', { callback = function()\n"
            f"  io.open({json.dumps(str(attached))}, 'w'):close()\n"
            "end })\n"
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
            wait_for(attached.exists, 120, "the lsp-agent client to attach")
            time.sleep(2)
            tmux("send-keys", "-t", "demo", ":1,2AgentAsk make greet use an f-string", "Enter")
            wait_for(lambda: model.remaining == 0, 120, "the run to use the scripted model's three replies")
            time.sleep(4)  # the proposal, its hint diagnostic and the statusline reach the editor
            tmux("send-keys", "-t", "demo", ":AgentTranscript", "Enter")
            time.sleep(1)
            tmux("send-keys", "-t", "demo", "C-w", "h", "2G", "")
            time.sleep(1)
            frames = ["After :1,2AgentAsk make greet use an f-string, then :AgentTranscript", capture()]
            tmux("send-keys", "-t", "demo", ":lua vim.lsp.buf.code_action()", "Enter")
            time.sleep(2)
            frames += ["vim.lsp.buf.code_action() on the hinted line", capture()]
            tmux("send-keys", "-t", "demo", "1", "Enter")
            time.sleep(2)
            frames += ["After choosing 1 (the edit is in the buffer, not yet saved)", capture()]
            tmux("send-keys", "-t", "demo", ":checkhealth lsp_agent", "Enter")
            time.sleep(3)
            frames += [":checkhealth lsp_agent", capture()]
            titles, shots = frames[::2], frames[1::2]
            screen = "\n".join(
                f"==== {title} ====\n{plain.rstrip()}\n"
                for title, (plain, _) in zip(titles, shots, strict=True)
            )
        finally:
            subprocess.run(["tmux", "-L", "lsp-agent-demo", "kill-server"], capture_output=True)
    out.write_text(screen.rstrip() + "\n", encoding="utf-8")
    if svg_dir is not None:
        write_svgs(svg_dir, titles, [coloured for _, coloured in shots])
    print(screen)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
