"""The monitor and secret files: on an index that still lists a file the user's `secretFiles` covers (built before
the rule, or by `lsp-agent index` run without the editor's settings), no receiver resolves through it: its module,
its classes as bases or annotations, a package's submodule only it makes; and its text is never read."""

from __future__ import annotations

import pytest

from lsp_agent.completion.context import line_reader
from lsp_agent.completion.members import Workspace
from lsp_agent.completion.monitor import receivers_at
from lsp_agent.index import WorkspaceIndex
from lsp_agent.workspace.secrets import SecretFiles

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": "class Base:\n    def load_config(self, path):\n        self.path = path\n",
    "pkg/util.py": "from .base import Base as Root\nVERSION = 1\n",
    "pkg/vault/__init__.py": "",
    "pkg/vault/keys.py": "SIGNING_KEY_NAME = 'k'\n",
}
# what the monitor vouches for at the cursor of each source when nothing is secret
CASES = {
    "a base class": ("from .base import Base\n\nclass App(Base):\n    def run(self):\n        |\n", "self"),
    "a base re-exported": (
        "from .util import Root\n\nclass App(Root):\n    def run(self):\n        |\n",
        "self",
    ),
    "a module": ("from . import base\n\ndef f():\n    |\n", "base"),
    "an annotation": ("from .base import Base\n\ndef f(item: Base):\n    |\n", "item"),
    "a package": ("import pkg\n\ndef f():\n    |\n", "pkg"),
}


@pytest.fixture(scope="module")
def index_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws") / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    index = WorkspaceIndex(root, db_path=root.parent / "index.db")  # indexed without the user's rules
    index.refresh()
    index.close()
    return root, index.db_path


def workspace(index_db, rules: list[str], read: list[str] | None = None) -> Workspace:
    """The monitor's view of the workspace under these `secretFiles` rules (the files it read go to `read`)."""
    root, db_path = index_db
    is_secret = SecretFiles(rules).is_secret
    reader = line_reader(root, {}, is_secret)

    def recorded(rel: str) -> list[str]:
        if read is not None:
            read.append(rel)
        return reader(rel)

    return Workspace(db_path, recorded, root.name, is_secret)


def at_marker(space: Workspace, source: str, rel: str = "pkg/main.py") -> dict[str, frozenset[str]]:
    return receivers_at(space, rel, source.replace("|", "", 1), source.index("|"))


@pytest.mark.parametrize("case", CASES)
def test_a_receiver_that_resolves_through_a_secret_file_is_unknown(index_db, case):
    source, receiver = CASES[case]
    assert receiver in at_marker(workspace(index_db, []), source)  # the index lists base.py: vouched for
    assert receiver not in at_marker(workspace(index_db, ["pkg/base.py"]), source)


def test_a_secret_file_is_never_read_and_none_of_its_names_is_offered(index_db):
    read: list[str] = []
    space = workspace(index_db, ["pkg/base.py"], read)
    found = {}
    for source, _ in CASES.values():
        found.update(at_marker(space, source))
    assert "pkg/base.py" not in read and "pkg/util.py" in read
    assert not any({"Base", "load_config", "base"} & members for members in found.values())


def test_a_secret_directory_hides_its_package_and_its_name_from_the_parent_package(index_db):
    space = workspace(index_db, ["pkg/vault/"])
    source = "import pkg\nfrom pkg import vault\n\ndef f():\n    |\n"
    assert "vault" not in at_marker(space, source) and "pkg" not in at_marker(space, source)
    plain = at_marker(workspace(index_db, []), source)
    assert "vault" in plain["pkg"] and "SIGNING_KEY_NAME" not in plain["pkg"]
    assert "keys" in plain["vault"]


def test_a_secret_open_file_gets_no_receivers(index_db):
    source = "from .base import Base\n\nclass App(Base):\n    def run(self):\n        |\n"
    assert at_marker(workspace(index_db, ["pkg/main.py"]), source) == {}
