"""PyTorch names link to PyTorch's documentation, offline.

* The inventory ``docs/inventories/torch-X.Y.inv`` for the running torch is
  exactly what ``make_torch_inventory.py`` derives from the committed listing
  of PyTorch's documentation sources, and every entry's page is one a listed
  directive generates (``generated/<name>.html`` for an autosummary entry,
  the listing page itself for an object or module directive).
* The source reader finds the directives as PyTorch's pages write them
  (MyST ``eval-rst`` fences, autosummary bodies with blank lines, options,
  templates that document members).
* (slow) A throw-away site with the project's configuration: a prose
  reference, a re-exported name, a code span, the code of a page (a ``>>>``
  example with a doctest flag too) and of a tutorial link to the inventory's
  pages; a reference to a torch name
  PyTorch does not document fails the build.

``browser_tests/test_torch_links.py`` checks the links of the whole built
site, in both editions, and prints their number.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "inventories"))

import make_torch_inventory as inv  # noqa: E402
import sitebuild  # noqa: E402

SERIES = inv.torch_series()


def test_inventory_is_derived_from_the_listing() -> None:
    items, _ = inv.entries(inv.read_listing(inv.listing_path(SERIES)))
    assert inv.inventory_path(SERIES).read_bytes() == inv.inventory_bytes(items, SERIES)


def test_an_attribute_that_holds_a_class_is_not_that_class() -> None:
    entries = inv.read_inventory(inv.inventory_path(SERIES))
    aliases = {
        n: role for n, (role, _) in entries.items() if n.endswith(".cls_to_become")
    }
    assert aliases, "the inventory lists no cls_to_become"
    assert set(aliases.values()) == {"py:attribute"}
    assert entries["torch.nn.Linear"][0] == "py:class"


def test_every_entry_traces_to_a_listed_directive() -> None:
    rows = inv.read_listing(inv.listing_path(SERIES))
    pages: dict[str, set[str]] = {}  # page -> the names a listed row puts there
    for row in rows:
        full = row.name if row.directive == "module" else inv.resolve(row)
        if full is None:
            continue
        page = (
            f"generated/{full}.html"
            if row.directive == "autosummary"
            else f"{row.page}.html"
        )
        pages.setdefault(page, set()).add(full)
    entries = inv.read_inventory(inv.inventory_path(SERIES))
    assert len(entries) > 1000, len(entries)
    untraced = []
    for name, (_, uri) in entries.items():
        page, _, anchor = uri.partition("#")
        owner = pages.get(page, set())
        # the object itself, or a member documented on its class's page
        if not (name in owner or name.rpartition(".")[0] in owner):
            untraced.append(name)
        if anchor not in (name, f"module-{name}"):
            untraced.append(f"{name} (anchor {anchor})")
    assert untraced == []


def test_source_reader_finds_directives(tmp_path: Path) -> None:
    (tmp_path / "_templates").mkdir()
    (tmp_path / "_templates" / "classtemplate.rst").write_text(
        ".. autoclass:: {{ name }}\n    :members:\n"
    )
    page = tmp_path / "demo.md"
    page.write_text(
        "# demo\n```{eval-rst}\n.. currentmodule:: torch\n```\n"
        "```{eval-rst}\n.. autosummary::\n    :toctree: generated\n"
        "    :nosignatures:\n\n    randn\n\n    Tensor.backward\n```\n"
        "```{eval-rst}\n.. autosummary::\n    :nosignatures:\n\n    torch.zeros\n```\n"
        "```{eval-rst}\n.. autosummary::\n    :toctree: generated\n"
        "    :template: classtemplate.rst\n\n    nn.Linear\n```\n"
        "```{eval-rst}\n.. automodule:: torch.func\n.. autofunction:: vmap\n"
        ".. py:module:: torch.autograd.graph\n   :noindex:\n```\n"
    )
    rows = [r.line() for r in inv.read_page(page, tmp_path / "_templates")]
    assert rows == [
        "demo\tautosummary\ttorch\trandn\t",
        "demo\tautosummary\ttorch\tTensor.backward\t",
        "demo\tautosummary\ttorch\tnn.Linear\tmembers",
        "demo\tmodule\t\ttorch.func\t",
        "demo\tautofunction\ttorch.func\tvmap\t",
    ]
    items, missing = inv.entries(inv.Row.parse(row) for row in rows)
    found = {item.name: (item.role, item.uri) for item in items}
    assert missing == []
    assert found["torch.randn"] == (
        "py:function",
        "generated/torch.randn.html#torch.randn",
    )
    assert found["torch.Tensor.backward"][0] == "py:method"
    assert found["torch.nn.Linear"][0] == "py:class"
    assert found["torch.nn.Linear.forward"][1].startswith(
        "generated/torch.nn.Linear.html#"
    )
    assert found["torch.func"] == ("py:module", "demo.html#module-torch.func")
    assert found["torch.func.vmap"] == ("py:function", "demo.html#torch.func.vmap")


PAGE = """\
---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

# A page

{py:func}`torch.autograd.grad`, {py:class}`torch.nn.Parameter` and the span
`torch.no_grad()`. The same class by its module path,
{py:class}`torch.nn.modules.linear.Linear`, and by its public name,
{py:class}`torch.nn.Linear`.

```{code-cell} python
import torch
from torch import nn

x = torch.randn(2, requires_grad=True)
layer = nn.Linear(2, 1)
```

```python
>>> torch.zeros(2)  # doctest: +ELLIPSIS
tensor([0., 0.])
```
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = sitebuild.make_site(tmp_path_factory.mktemp("torchlinks"))
    (root / "docs" / "page.md").write_text(PAGE)
    return root


BASE = f"https://docs.pytorch.org/docs/{SERIES}/"


def hrefs(markup: str) -> set[str]:
    return set(re.findall(r'href="(https://docs\.pytorch\.org/[^"]*)"', markup))


@pytest.mark.slow
def test_prose_and_code_link_to_pytorch(site: Path) -> None:
    sitebuild.assert_passes(sitebuild.build(site))
    html = site / "docs" / "_build" / "html"
    markup = (html / "page.html").read_text()
    page = hrefs(markup)
    expected = {
        "generated/torch.autograd.grad.html#torch.autograd.grad",  # reference
        # a re-exported name: documented as torch.nn.parameter.Parameter
        "generated/torch.nn.parameter.Parameter.html#torch.nn.parameter.Parameter",
        "generated/torch.no_grad.html#torch.no_grad",  # a code span
        "generated/torch.randn.html#torch.randn",  # a code cell
        "generated/torch.nn.Linear.html#torch.nn.Linear",  # nn. in a code cell
        # an example whose doctest flag the page does not show
        "generated/torch.zeros.html#torch.zeros",
    }
    assert {BASE + uri for uri in expected} <= page
    # Both names of Linear link to its own page, never to an attribute that
    # holds the class (torch.nn.LazyLinear.cls_to_become).
    linear = BASE + "generated/torch.nn.Linear.html#torch.nn.Linear"
    for name in ("torch.nn.modules.linear.Linear", "torch.nn.Linear"):
        links = re.findall(
            rf'href="([^"]*)"[^>]*>(?:<[^>]+>)*{re.escape(name)}<', markup
        )
        assert links == [linear], (name, links)
    assert "cls_to_become" not in markup
    assert "doctest:" not in markup
    tutorial = hrefs((html / "tutorials" / "01_example.html").read_text())
    assert BASE + "generated/torch.ones.html#torch.ones" in tutorial
    entries = {
        BASE + uri for _, uri in inv.read_inventory(inv.inventory_path(SERIES)).values()
    }
    assert page | tutorial <= entries


@pytest.mark.slow
def test_unresolved_torch_reference_fails(site: Path) -> None:
    page = site / "docs" / "page.md"
    page.write_text(PAGE.replace("torch.autograd.grad", "torch.autograd.no_such_thing"))
    sitebuild.assert_fails(
        sitebuild.build(site),
        "reference target not found",
        "torch.autograd.no_such_thing",
    )
