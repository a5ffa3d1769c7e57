"""No published address breaks: a page renamed or deleted since the tutorials were
renumbered (committed, or in the work tree) has a redirect in ``docs/conf.py``'s
``rediraffe_redirects``. rediraffe's own ``rediraffecheckdiff`` sees only one diff,
and only files under docs/; the tutorials come from gallery/*.py.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The parent of the commit that renumbered the tutorials: what came before was
# never published.
BASE = "3d89be5afb51b8731577ec653e148da053d6337e"
NOT_PAGES = {"_build", "_templates", "locale", "inventories", "tutorials", "generated"}


def docname(path: str) -> str | None:
    """The page a repository file makes, if any."""
    p = Path(path)
    if p.parts[0] == "gallery":
        if p.name == "GALLERY_HEADER.rst":
            return "tutorials/index"
        return f"tutorials/{p.stem}" if re.match(r"\d\d_\w+\.py$", p.name) else None
    page = p.parts[0] == "docs" and p.suffix in (".md", ".rst")
    if page and not NOT_PAGES & set(p.parts[1:-1]):
        return p.relative_to("docs").with_suffix("").as_posix()
    return None


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def shallow() -> bool:
    return git("rev-parse", "--is-shallow-repository").strip() == "true"


def gone() -> set[str]:
    """Pages whose source was renamed or deleted since BASE (in a shallow
    clone: in the history it has)."""
    found = set()
    since = "HEAD" if shallow() else f"{BASE}..HEAD"
    for log in (
        git("log", "-M", "--name-status", "--diff-filter=RD", "--format=",
            since, "--", "docs", "gallery"),
        git("diff", "-M", "--name-status", "--diff-filter=RD", "HEAD", "--",
            "docs", "gallery"),
    ):  # fmt: skip
        for line in log.splitlines():
            if line.strip() and (name := docname(line.split("\t")[1])):
                found.add(name)
    return found


def pages() -> set[str]:
    files = git("ls-files", "-co", "--exclude-standard", "docs", "gallery").split()
    return {d for f in files if (ROOT / f).is_file() and (d := docname(f))}


def redirects() -> dict[str, str]:
    """``rediraffe_redirects`` as conf.py computes it (without running conf.py)."""
    tree = ast.parse((ROOT / "docs" / "conf.py").read_text(encoding="utf-8"))
    names = {"RENUMBERED", "rediraffe_redirects"}
    wanted = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and {getattr(t, "id", "") for t in node.targets} & names
    ]
    scope: dict[str, object] = {}
    exec(compile(ast.Module(wanted, []), "conf.py", "exec"), scope)
    return scope["rediraffe_redirects"]  # type: ignore[return-value]


def unredirected(gone: set[str], pages: set[str], redirects: dict[str, str]) -> list:
    return sorted(name for name in gone - pages if name not in redirects)


@pytest.fixture(scope="module")
def history() -> set[str]:
    return gone()


def test_every_renamed_or_deleted_page_redirects(history: set[str]) -> None:
    # The renumbered tutorials: the check reads history (all of it, unless shallow).
    assert shallow() or len(history) >= 15
    assert unredirected(history, pages(), redirects()) == []


def test_a_renamed_page_without_a_redirect_fails(history: set[str]) -> None:
    renamed = {*history, "how-to/inspect-the-graph"}
    now = pages() - {"how-to/inspect-the-graph"}
    assert unredirected(renamed, now, redirects()) == ["how-to/inspect-the-graph"]
    assert docname("gallery/02_leaf_tensors.py") == "tutorials/02_leaf_tensors"
    assert docname("docs/locale/zh_CN/LC_MESSAGES/index.po") is None


def test_every_redirect_leads_to_a_page() -> None:
    current = pages()
    assert {new for new in redirects().values() if new not in current} == set()
    assert set(redirects()) & current == set()  # nor hides one
