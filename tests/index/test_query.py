"""Query analysis: what an issue report, a question or a name says about where to look."""

from __future__ import annotations

from lsp_agent.index.query import analyze_query

ISSUE = """QuerySet.bulk_create() crashes on mixed case columns in unique_fields.
Description

Calling `Activity.objects.bulk_create(instances, update_conflicts=True, unique_fields=["rectype"])` fails:

```
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/django/db/models/query.py", line 804, in bulk_create
    returned_columns = self._batched_insert(
  File "django/db/backends/postgresql/operations.py", line 355, in on_conflict_suffix_sql
    return "ON CONFLICT(%s) DO UPDATE SET %s" % (
ProgrammingError: column "rectype" does not exist
```
The SQL comes from sql/compiler.py. I wrote a test for it.
"""


def test_traceback_frames_paths_and_functions() -> None:
    q = analyze_query(ISSUE)
    assert q.frames == [
        ("venv/lib/python3.11/site-packages/django/db/models/query.py", 804, "bulk_create"),
        ("django/db/backends/postgresql/operations.py", 355, "on_conflict_suffix_sql"),
    ]
    assert "sql/compiler.py" in q.paths
    assert "django/db/backends/postgresql/operations.py" in q.paths


def test_dotted_names_code_identifiers_and_code_text() -> None:
    q = analyze_query(ISSUE)
    assert "QuerySet.bulk_create" in q.dotted
    assert "Activity.objects.bulk_create" in q.dotted
    assert {"bulk_create", "unique_fields", "_batched_insert", "on_conflict_suffix_sql"} <= set(q.identifiers)
    assert "ProgrammingError" in q.identifiers
    assert "ON CONFLICT" in q.code  # the fenced block
    assert "update_conflicts=True" in q.code  # inline code
    assert "Description" not in q.identifiers and "Calling" not in q.identifiers  # prose stays prose


def test_a_long_report_that_mentions_tests_does_not_ask_for_tests() -> None:
    assert not analyze_query(ISSUE).wants_tests
    assert analyze_query("tests for bulk_create with unique fields").wants_tests
    assert analyze_query("where is the documentation of secho").wants_docs
    assert not analyze_query("how are subcommands dispatched in a group").wants_tests


def test_a_bare_name_or_path_is_a_code_query() -> None:
    for text in (
        "MultiCommand.invoke",
        "secho",
        "`format_currency`",
        "src/click/core.py",
        "click.core:Group",
    ):
        assert analyze_query(text).is_code_query, text
    for text in ("how are subcommands dispatched in a group", "secho colors"):
        assert not analyze_query(text).is_code_query, text


def test_file_names_in_prose_are_paths_but_dotted_modules_are_not() -> None:
    q = analyze_query("The check in setup.py and in django.db.models.query breaks")
    assert q.paths == ["setup.py"]
    assert "django.db.models.query" in q.dotted
