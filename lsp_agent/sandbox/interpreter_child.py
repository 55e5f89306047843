"""The persistent interpreter's child side, run as `python -c <this source>` inside the sandbox.

Protocol: one JSON object per line on stdin, {"code": str}; one JSON reply per line on the saved stdout,
{"stdout": str, "error": str | None, "value": str | None}. Variables live in one namespace between requests.
Standalone on purpose: it imports nothing from lsp_agent.
"""

import ast
import io
import json
import os
import sys
import traceback

OUTPUT_LIMIT = 1_000_000


class _CappedWriter(io.TextIOBase):
    """A stdout replacement that keeps at most OUTPUT_LIMIT characters and counts the rest."""

    def __init__(self):
        self.parts = []
        self.size = 0
        self.dropped = 0

    def writable(self):
        return True

    def write(self, text):
        room = OUTPUT_LIMIT - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def value(self):
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n[... {self.dropped:,} characters of output cut ...]\n"
        return text


def _run(code, namespace):
    """Exec code; the value of a final expression is returned like the REPL shows it."""
    tree = ast.parse(code, "<code>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<code>", "exec"), namespace)
    if last is not None:
        value = eval(compile(last, "<code>", "eval"), namespace)
        if value is not None:
            return repr(value)
    return None


def _error_text(exc):
    """The traceback without this file's frames."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename == "<code>" or "<code>" not in f.filename
    ]
    frames = [f for f in frames if f.filename != "<string>"]
    lines = traceback.format_list(frames) if frames else []
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    head = "Traceback (most recent call last):\n" if lines else ""
    return head + "".join(lines) + detail


def main():
    """Serve requests until stdin closes."""
    # The protocol moves to private (non-inheritable) descriptors; the code and its subprocesses get /dev/null
    # as stdin and stderr as fd 1, so nothing they do can read or corrupt a protocol line.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    protocol.write(json.dumps({"ready": True, "cwd": os.getcwd()}) + "\n")
    for line in requests:
        try:
            request = json.loads(line)
            code = request["code"]
        except (ValueError, KeyError, TypeError):
            protocol.write(json.dumps({"stdout": "", "error": "bad request", "value": None}) + "\n")
            continue
        writer = _CappedWriter()
        saved_out, saved_err = sys.stdout, sys.stderr
        sys.stdout = writer
        error = value = None
        try:
            value = _run(code, namespace)
        except SystemExit as exc:
            error = f"SystemExit: {exc.code} (exit() is ignored here; the interpreter keeps running)"
        except BaseException as exc:  # noqa: BLE001 - every failure is reported to the model
            error = _error_text(exc)
        finally:
            sys.stdout, sys.stderr = saved_out, saved_err
        try:
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        protocol.write(json.dumps({"stdout": writer.value(), "error": error, "value": value}) + "\n")


if __name__ == "__main__":
    main()
