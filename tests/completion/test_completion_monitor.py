"""The monitor's member sets and slips, on an indexed workspace: which receivers the workspace vouches for (and which it
must not), and which names of a suggestion are slips."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.completion.context import line_reader
from lsp_agent.completion.members import Workspace
from lsp_agent.completion.monitor import first_slip, grammar_for, receivers_at
from lsp_agent.completion.postprocess import Cursor
from lsp_agent.index import WorkspaceIndex

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "class Base:\n"
        "    kind = 'base'\n"
        "    def __init__(self):\n"
        "        self.path, self.size = None, 0\n"
        "    def load_config(self, path):\n"
        "        return path\n"
    ),
    "pkg/util.py": "import os\nfrom .base import Base as Root\nVERSION = 1\ndef helper():\n    global CACHE\n",
    "pkg/dynamic.py": "def __getattr__(name):\n    return name\n",
    "pkg/star.py": "from os.path import *\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/leaf.py": "LEAF = 1\n",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("ws") / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    index = WorkspaceIndex(root, db_path=root.parent / "index.db")
    index.refresh()
    index.close()
    return Workspace(index.db_path, line_reader(root, {}), root.name)


def at_marker(workspace: Workspace, source: str, rel: str = "pkg/main.py") -> dict[str, frozenset[str]]:
    """The receivers at the `|` of `source` (which is removed)."""
    offset = source.index("|")
    return receivers_at(workspace, rel, source.replace("|", "", 1), offset)


def names(members: frozenset[str]) -> set[str]:
    return {m for m in members if not m.startswith("__")}


def test_self_has_the_class_and_its_workspace_bases_members(workspace):
    found = at_marker(
        workspace,
        "from .base import Base\n\nclass App(Base):\n    limit = 3\n    def run(self):\n        self.done = True\n"
        "        |\n    def stop(self):\n        self.stopped = 1\n",
    )
    assert names(found["self"]) == {
        "limit",
        "run",
        "stop",
        "done",
        "stopped",
        "kind",
        "load_config",
        "path",
        "size",
    }


def test_a_base_reached_through_a_re_export_and_a_module_attribute(workspace):
    source = "from . import util\n\nclass App(util.Root):\n    def run(self):\n        |\n"
    assert "load_config" in at_marker(workspace, source)["self"]
    source = "from .util import Root\n\nclass App(Root):\n    def run(self):\n        |\n"
    assert "load_config" in at_marker(workspace, source)["self"]


@pytest.mark.parametrize(
    "header",
    [
        "import threading\n\nclass App(threading.Thread):",  # an external base
        "from somewhere import Base\n\nclass App(Base):",  # imported from outside the workspace
        "class App(Unknown):",  # defined nowhere the workspace can see (a star import, a builtin it is not)
        "from .base import Base\n\nclass App(Base, metaclass=Meta):",
        "import functools\n\n@functools.lru_cache\nclass App:",  # a decorator that may return anything
    ],
)
def test_self_is_not_vouched_for_where_the_members_may_be_incomplete(workspace, header):
    assert "self" not in at_marker(workspace, f"{header}\n    def run(self):\n        |\n")


@pytest.mark.parametrize("body", ["setattr(self, 'x', 1)", "self.__dict__.update(kw)", "return vars(self)"])
def test_a_class_that_sets_attributes_dynamically_is_not_vouched_for(workspace, body):
    source = f"class App:\n    def run(self, **kw):\n        {body}\n        |\n"
    assert "self" not in at_marker(workspace, source)


def test_dataclass_fields_builtin_bases_and_cls(workspace):
    source = (
        "from dataclasses import dataclass\n\n@dataclass\nclass Point(dict):\n    x: int\n    y: int = 0\n"
    )
    found = at_marker(workspace, source + "    @classmethod\n    def make(cls):\n        |\n")
    assert {"x", "y", "make", "items", "keys"} <= found["cls"]


def test_the_cursor_below_a_method_at_class_level_is_not_in_it(workspace):
    source = "class App:\n    def run(self):\n        x = 1\n    |\n"
    assert "self" not in at_marker(workspace, source)


def test_imported_workspace_modules_and_their_top_level_names(workspace):
    found = at_marker(
        workspace,
        "import os\nimport pkg.util as u\nfrom pkg import sub, dynamic, star\nfrom . import base\n\ndef f():\n    |\n",
    )
    assert names(found["u"]) == {"os", "Root", "VERSION", "helper", "CACHE"}
    assert names(found["sub"]) == {"leaf"}  # a package: its submodules
    assert names(found["base"]) == {"Base"}
    assert "os" not in found and "dynamic" not in found and "star" not in found  # external, __getattr__, star


def test_a_module_name_rebound_in_the_file_is_not_the_module(workspace):
    assert "base" not in at_marker(workspace, "from . import base\n\ndef f(base):\n    |\n")


def test_annotated_parameters(workspace):
    source = "from .base import Base\n\ndef f(item: Base, name: str, other: object, loose):\n    |\n"
    found = at_marker(workspace, source)
    assert "load_config" in found["item"] and "upper" in found["name"]
    assert "other" not in found and "loose" not in found
    narrowed = "from .base import Base\n\ndef f(item: Base):\n    if isinstance(item, Sub):\n        |\n"
    assert "item" not in at_marker(workspace, narrowed)


MEMBERS = {"self": frozenset({"load_config", "loaded", "path", "__init__"})}


def slip(suggestion: str, before: str = "        x = "):
    return first_slip(Cursor(before, ""), suggestion, MEMBERS)


def test_a_slip_is_the_first_name_the_receiver_lacks():
    found = slip("self.path + self.parse_config(self.path)")
    assert found is not None and found.written == "parse_config" and found.at == len("self.path + self.")
    assert found.choices == ("load_config", "loaded", "path")  # dunders are never offered
    assert grammar_for(found.choices) == 'root ::= "load_config" | "loaded" | "path"'


@pytest.mark.parametrize(
    "suggestion",
    [
        "self.cache = {}",  # being assigned
        "self.a, self.b = 1, 2",
        "self.count: int = 0",
        "self.__class__.__name__",  # dunders
        "'self.nothing' # self.nothing",  # in a string, in a comment
        "other.nothing()",  # an unknown receiver
        "self.helper()\n\n    def helper(self):\n        pass",  # defined by the suggestion itself
    ],
)
def test_what_is_never_a_slip(suggestion):
    assert slip(suggestion) is None


def test_a_name_the_user_started_typing_is_completed_among_the_members_that_start_so():
    found = slip("_cfg()", before="        x = self.lo")
    assert found is not None and found.at == 0 and found.choices == ("ad_config", "aded")
    assert slip("_cfg()", before="        x = self.loaded") is None  # a member already: the user may go on
    assert slip("_cfg()", before="        x = self.zz") is None  # no member starts so: a new name


def test_a_name_cut_by_the_token_limit_is_left_alone():
    assert first_slip(Cursor("    ", ""), "x = self.load_conf", MEMBERS, cut_short=True) is None
    assert first_slip(Cursor("    ", ""), "x = self.load_conf", MEMBERS) is not None


def test_an_unindexed_file_or_a_non_python_text_gives_no_receivers(workspace, tmp_path: Path):
    assert at_marker(workspace, "def f(x):\n    |\n") == {}
