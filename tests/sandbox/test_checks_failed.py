"""A run whose own checks fail at the end (the tests it ran before finishing, the syntax check) is no success: its
result, `ask`'s summary line and exit status, `--apply` and the editor's proposal all say so (scripted model)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import asker, run_scripted

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from scripted_editor import code_actions_at  # noqa: E402
from server_editor import scripted_settings, start_editor, stop_editor, write_tree  # noqa: E402

from lsp_agent.testing.scripted_model import ScriptedModelServer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CALC = "def sub(a, b):\n    return a + b\n"
TEST_CALC = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
TASK = "sub() adds instead of subtracting; fix it"

pytestmark = pytest.mark.usefixtures("litellm_imported", "no_pytest_plugins")


def tool(name: str, **arguments: object) -> dict:
    """A script step with one native tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def finish_twice(new_text: str) -> list[dict]:
    """The model edits `a + b` into `new_text` and calls task_complete twice whatever it hears."""
    edit = tool("edit_file", path="calc.py", old_text="a + b", new_text=new_text)
    return [edit, tool("task_complete", summary="fixed"), tool("task_complete", summary="fixed")]


WRONG = finish_twice("a * b")  # the tests fail
BROKEN = finish_twice("a +* b")  # does not parse


def workspace(root: Path, *, tests: bool = True) -> Path:
    """calc.py with the bug, and its test unless `tests` is False."""
    return write_tree(root, {"calc.py": CALC, **({"test_calc.py": TEST_CALC} if tests else {})})


async def test_tests_failing_at_the_end_make_the_run_checks_failed(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    out = await run_scripted(root, WRONG, TASK, permission=asker("allow_once"))
    result = out.result
    assert result.stop_reason == "complete" and not result.success and result.status == "checks_failed"
    assert result.checks_failed == ["tests fail: `python -m pytest test_calc.py`: 1 failed"]
    assert result.proposal is not None and result.proposal.checks_failed == result.checks_failed
    (done,) = out.of("done")
    assert done["status"] == "checks_failed" and done["checksFailed"] == result.checks_failed
    assert out.of("proposal")[0]["checksFailed"] == result.checks_failed


async def test_a_fix_made_after_failing_tests_is_a_success(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    script = [
        *WRONG[:2],
        tool("edit_file", path="calc.py", old_text="a * b", new_text="a - b"),
        tool("task_complete", summary="fixed"),
    ]
    out = await run_scripted(root, script, TASK, permission=asker("allow_once"))
    assert out.result.success and out.result.status == "success" and out.result.checks_failed == []


async def test_a_plain_answer_after_an_edit_gets_the_tests_run_at_the_end(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    asked: list[tuple[str, dict]] = []
    script = [WRONG[0], {"content": "I changed sub; it should work now."}]
    out = await run_scripted(root, script, TASK, permission=asker("allow_once", asked))
    result = out.result
    assert result.stop_reason == "no_tool_call" and result.status == "checks_failed" and not result.success
    assert result.answer.endswith("\n\nTests fail: `python -m pytest test_calc.py`: 1 failed.")
    assert [a[0] for a in asked] == ["run_tests"]  # through the exec permission, like task_complete's
    script = [
        WRONG[0],
        tool("edit_file", path="calc.py", old_text="a * b", new_text="a - b"),
        {"content": "Done."},
    ]
    out = await run_scripted(root, script, TASK, permission=asker("allow_once"))
    assert out.result.status == "success" and out.result.answer.startswith("Done.\n\nTests pass:")
    out = await run_scripted(root, [WRONG[0], {"content": "Done."}], TASK, permission=asker("reject_once"))
    assert out.result.status == "success" and out.result.answer.endswith(
        "Tests not run: running them was not permitted."
    )


async def test_a_syntax_error_finished_anyway_makes_the_run_checks_failed(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", tests=False)
    out = await run_scripted(root, BROKEN, TASK, permission=asker("allow_once"))
    assert out.result.status == "checks_failed" and not out.result.success
    (check,) = out.result.checks_failed
    assert check.startswith("syntax error: calc.py:2: invalid syntax")


def ask(root: Path, model: ScriptedModelServer, *flags: str) -> subprocess.CompletedProcess:
    """`lsp-agent ask --allow-exec` in a subprocess against the scripted model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    args = ["--repo", str(root), "--model", "openai/scripted", "--api-base", model.base_url, "--api-key", "t"]
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "ask", TASK, *args, "--allow-exec", *flags],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


@pytest.mark.slow
def test_ask_apply_refuses_a_proposal_whose_tests_fail_and_apply_failing_writes_it(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    with ScriptedModelServer(WRONG) as model:
        proc = ask(root, model, "--apply")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = proc.stdout.rstrip().splitlines()
    assert lines[-1].startswith("checks failed (complete) | iterations 3")
    assert "not applied (`lsp-agent apply` writes it anyway)" in lines[-1]
    assert (
        "warning: the proposal fails its own checks: tests fail: `python -m pytest test_calc.py`: 1 failed"
        in (proc.stdout)
    )
    assert (
        "not applied: the proposal fails its own checks (`--apply-failing` writes it anyway)" in proc.stdout
    )
    assert (root / "calc.py").read_text() == CALC  # untouched
    with ScriptedModelServer(WRONG) as model:
        proc = ask(root, model, "--apply-failing")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1].startswith("checks failed (complete)")
    assert "| applied 1 file(s)" in proc.stdout
    assert (root / "calc.py").read_text() == CALC.replace("a + b", "a * b")  # written, as asked


@pytest.mark.slow
def test_ask_apply_refuses_a_proposal_that_does_not_parse(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", tests=False)
    with ScriptedModelServer(BROKEN) as model:
        proc = ask(root, model, "--apply")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert (
        "warning: the proposal fails its own checks: syntax error: calc.py:2: invalid syntax" in proc.stdout
    )
    assert proc.stdout.rstrip().splitlines()[-1].startswith("checks failed (complete)")
    assert (root / "calc.py").read_text() == CALC


@pytest.mark.asyncio
async def test_the_editor_hears_that_the_proposals_checks_failed(tmp_path: Path) -> None:
    root = workspace(tmp_path / "proj")
    with ScriptedModelServer([]) as model:
        settings = {**scripted_settings(model), "permissions": {"allow": ["run_tests"]}}
        editor = await start_editor(root, tmp_path / "cache", init_options={"lspAgent": settings})
        try:
            uri = editor.open("calc.py")
            model.add_steps(WRONG)
            run_id = await editor.ask(TASK)
            done = await editor.wait_event(run_id, "done", timeout=120)
            failed = "tests fail: `python -m pytest test_calc.py`: 1 failed"
            assert done["status"] == "checks_failed" and done["success"] is False
            assert done["checksFailed"] == [failed] and done["pending"] is True
            titles = [a.title for a in await code_actions_at(editor, uri, 1)]
            assert any(t.startswith(f"Apply agent edit: [checks failed: {failed}] fixed") for t in titles), (
                titles
            )
            status = await editor.command("lspAgent.status")
            (pending,) = status["pending"]
            assert pending["checksFailed"] == [failed] and pending["summary"].startswith(
                "[checks failed: tests"
            )
            assert any(failed in m.message for m in editor.client.messages)  # a window/showMessage warning
            end = editor.client.progress_reports[f"lsp-agent/run/{run_id}"][-1]
            assert end.message == f"checks failed: {failed}"
        finally:
            await stop_editor(editor)
    assert (root / "calc.py").read_text() == CALC  # nothing applied
