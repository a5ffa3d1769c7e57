"""Make the intersphinx inventory of PyTorch's documentation, offline.

The site links PyTorch names (``torch.autograd.grad``, ``nn.Linear``,
``Tensor.backward`` ...) to PyTorch's own documentation of the torch version
that builds it, through ``docs/inventories/torch-<major>.<minor>.inv``. That
file is not downloaded: it is derived from PyTorch's documentation *sources*
(``docs/source`` of pytorch/pytorch), so every entry is a page those sources
generate. Two steps, each a mode of this script:

1. ``--source PYTORCH/docs/source [--ref v2.13.0]`` reads the pages in
   ``PAGES`` and writes ``torch-X.Y.listing.txt``: one line per object a page
   documents, as the source declares it (page, directive, current module,
   name as written, and ``members`` when the class template documents its
   members). Only ``autosummary`` lists with ``:toctree:`` (each entry gets a
   page ``generated/<full name>.html``), ``auto*``/``py:*`` object directives
   and module directives count; an autosummary without ``:toctree:`` only
   links to pages made elsewhere.
2. With no ``--source``, it turns the committed listing into the inventory.
   The names are resolved the way autosummary resolves them (the current
   module plus the name, else the name alone) in the installed torch, which
   must be the version the listing is for; that also gives each object its
   intersphinx role (class, function, method, attribute, property, module).
   A class whose template documents ``:members:`` adds its own public,
   documented members (autodoc's rule) as anchors on its page. A listed name
   the installed torch does not have is left out and reported.

``--check`` rebuilds the inventory in memory and fails if the committed file
differs. ``tests/site/test_torch_links.py`` runs the same derivation.

Usage::

    python docs/inventories/make_torch_inventory.py \\
        --source ~/pytorch/docs/source --ref v2.13.0
    python docs/inventories/make_torch_inventory.py           # listing -> .inv
    python docs/inventories/make_torch_inventory.py --check
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The pages of PyTorch's docs that document what this site uses.
PAGES = (
    "torch.md",
    "tensors.md",
    "tensor_attributes.rst",
    "autograd.md",
    "func.api.md",
    "nn.md",
    "nn.functional.md",
    "optim.md",
    "checkpoint.md",
    "testing.md",
)
DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:py:)?([\w-]+)::\s*(.*?)\s*$")
OPTION = re.compile(r"^\s+:([\w-]+):\s*(.*?)\s*$")
OBJECTS = {
    "autoclass",
    "autofunction",
    "automethod",
    "autoattribute",
    "autoexception",
    "class",
    "function",
    "method",
    "attribute",
    "data",
    "exception",
}
SETS_MODULE = {"currentmodule", "automodule", "module"}


@dataclass(frozen=True)
class Row:
    """One object a PyTorch documentation page declares."""

    page: str  # the source file's name without suffix: its HTML page
    directive: str  # "autosummary", "autoclass", "module", ...
    module: str  # the current module where the directive stands
    name: str  # as written
    members: bool  # a class page that documents its members

    def line(self) -> str:
        flags = "members" if self.members else ""
        return "\t".join([self.page, self.directive, self.module, self.name, flags])

    @classmethod
    def parse(cls, line: str) -> Row:
        page, directive, module, name, flags = line.split("\t")
        return cls(page, directive, module, name, flags == "members")


def torch_series() -> str:
    import torch

    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def listing_path(series: str) -> Path:
    return HERE / f"torch-{series}.listing.txt"


def inventory_path(series: str) -> Path:
    return HERE / f"torch-{series}.inv"


# -- step 1: the sources -> the listing ---------------------------------------
def read_page(path: Path, templates: Path) -> Iterator[Row]:
    """The objects one page declares, in order."""
    page = path.name.rsplit(".", 1)[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    module = ""
    i = 0
    while i < len(lines):
        match = DIRECTIVE.match(lines[i])
        i += 1
        if not match:
            continue
        indent, directive, argument = match.groups()
        options: dict[str, str] = {}
        while i < len(lines) and (m := OPTION.match(lines[i])):
            options[m.group(1)] = m.group(2)
            i += 1
        if directive in SETS_MODULE:
            module = argument
            if directive != "currentmodule" and "noindex" not in options:
                yield Row(page, "module", "", argument, False)
        elif directive == "autosummary":
            names, i = autosummary_names(lines, i, len(indent))
            if "toctree" not in options:
                continue
            template = options.get("template")
            members = bool(template) and documents_members(templates / template)
            for name in names:
                yield Row(page, "autosummary", module, name, members)
        elif directive in OBJECTS:
            name = argument.split("(", 1)[0].strip()
            yield Row(page, directive, module, name, "members" in options)


def autosummary_names(lines: list[str], i: int, indent: int) -> tuple[list[str], int]:
    """The entries of an autosummary's body (blank lines may separate them)."""
    names = []
    while i < len(lines):
        line = lines[i]
        if line.strip() and (len(line) - len(line.lstrip()) <= indent):
            break
        if line.strip().startswith("```"):
            break
        entry = line.strip()
        if entry and not entry.startswith((":", "..")):
            names.append(entry)
        i += 1
    return names, i


def documents_members(template: Path) -> bool:
    return template.is_file() and ":members:" in template.read_text(encoding="utf-8")


def write_listing(source: Path, ref: str, series: str) -> Path:
    rows = []
    for page in PAGES:
        rows.extend(read_page(source / page, source / "_templates"))
    header = [
        f"# What PyTorch {series}'s documentation sources declare, per page:",
        f"# pytorch/pytorch docs/source @ {ref}, read by make_torch_inventory.py.",
        "# page\tdirective\tcurrent module\tname as written\tmembers",
    ]
    out = listing_path(series)
    out.write_text("\n".join([*header, *(r.line() for r in rows)]) + "\n")
    return out


def read_listing(path: Path) -> list[Row]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Row.parse(line) for line in lines if line and not line.startswith("#")]


# -- step 2: the listing -> inventory entries ---------------------------------
@dataclass(frozen=True, order=True)
class Entry:
    """One inventory entry: a documented object and where its page has it."""

    name: str
    role: str  # "py:function", "py:class", ...
    uri: str  # relative to the docs' base URL, with the anchor


def lookup(full: str) -> tuple[Any, Any] | None:
    """``(object, parent)`` for a dotted name in the installed torch."""
    parts = full.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        parent = None
        try:
            for part in parts[cut:]:
                parent, obj = obj, inspect.getattr_static(obj, part)
        except AttributeError:
            return None
        return obj, parent
    return None


def shadowed(module: str) -> bool:
    """Whether the package's attribute of a module's name is something else:
    ``torch.autograd.gradcheck`` is the function, not the module, in code."""
    package, _, name = module.rpartition(".")
    if not package:
        return False
    attribute = getattr(importlib.import_module(package), name, None)
    return attribute is not None and attribute is not importlib.import_module(module)


def role_of(obj: Any, parent: Any, name: str) -> str:
    if inspect.ismodule(obj):
        return "py:module"
    # A class attribute that holds another class (LazyLinear.cls_to_become is
    # Linear) is an attribute, "alias of" that class, as autodoc documents it.
    alias = inspect.isclass(obj) and obj.__name__ != name.rpartition(".")[2]
    if inspect.isclass(obj) and not (alias and inspect.isclass(parent)):
        return "py:class"
    if inspect.isclass(parent):
        if isinstance(obj, property):
            return "py:property"
        if not alias and (isinstance(obj, staticmethod | classmethod) or callable(obj)):
            return "py:method"
        return "py:attribute"
    return "py:function" if callable(obj) else "py:data"


def resolve(row: Row) -> str | None:
    """The full name, as autosummary and autodoc find it."""
    name = row.name.lstrip("~")
    absolute = name.startswith("torch.") or not row.module
    candidates = [name] if absolute else [f"{row.module}.{name}", name]
    for full in candidates:
        if lookup(full) is not None:
            return full
    return None


def documented_members(cls: type) -> list[tuple[str, Any]]:
    """A class's own public members that have their own docstring, as
    autodoc's ``:members:`` documents them (no undocumented, no inherited)."""
    found = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        doc = getattr(value, "__doc__", None)
        if not isinstance(doc, str) or not doc.strip():
            continue
        if doc == getattr(type(value), "__doc__", None):
            continue  # a plain value: its type's docstring, not its own
        found.append((name, value))
    return found


def entries(rows: Iterable[Row]) -> tuple[list[Entry], list[Row]]:
    """The inventory entries the listing gives, and the rows torch lacks."""
    out: dict[tuple[str, str], Entry] = {}
    missing = []
    for row in rows:
        if row.directive == "module":
            full: str | None = row.name
            page = f"{row.page}.html"
            anchor = f"module-{row.name}"
            if lookup(row.name) is None or shadowed(row.name):
                full = None
        else:
            full = resolve(row)
            page = (
                f"generated/{full}.html"
                if row.directive == "autosummary"
                else f"{row.page}.html"
            )
            anchor = full or ""
        if full is None:
            missing.append(row)
            continue
        found = lookup(full)
        assert found is not None
        obj, parent = found
        role = role_of(obj, parent, full)
        out.setdefault((role, full), Entry(full, role, f"{page}#{anchor}"))
        if row.members and inspect.isclass(obj):
            for member, value in documented_members(obj):
                name = f"{full}.{member}"
                entry = Entry(name, role_of(value, obj, name), f"{page}#{name}")
                out.setdefault((entry.role, name), entry)
    return sorted(out.values()), missing


def inventory_bytes(items: list[Entry], series: str) -> bytes:
    header = (
        "# Sphinx inventory version 2\n"
        "# Project: PyTorch\n"
        f"# Version: {series}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    body = ""
    for item in items:
        uri = item.uri
        if uri.endswith("#" + item.name):
            uri = uri[: -len(item.name)] + "$"
        body += f"{item.name} {item.role} 1 {uri} -\n"
    return header.encode() + zlib.compress(body.encode(), 9)


def read_inventory(path: Path) -> dict[str, tuple[str, str]]:
    """``{name: (role, uri)}`` of an inventory this script wrote."""
    data = path.read_bytes()
    head = b"".join(data.splitlines(keepends=True)[:4])
    found = {}
    for line in zlib.decompress(data[len(head) :]).decode().splitlines():
        name, role, _, uri, _ = line.split(" ")
        found[name] = (role, uri.replace("$", name) if uri.endswith("$") else uri)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="pytorch/pytorch's docs/source")
    parser.add_argument("--ref", default="v2.13.0", help="the tag or commit read")
    parser.add_argument("--check", action="store_true", help="fail if out of date")
    args = parser.parse_args(argv)
    series = torch_series()
    if args.source:
        print(f"wrote {write_listing(args.source, args.ref, series)}")
    listing = listing_path(series)
    if not listing.exists():
        print(f"no {listing.name}: run with --source PYTORCH/docs/source first")
        return 1
    items, missing = entries(read_listing(listing))
    for row in missing:
        print(f"left out: {row.page}: {row.directive} {row.module} {row.name}")
    data = inventory_bytes(items, series)
    target = inventory_path(series)
    if args.check:
        if not target.exists() or target.read_bytes() != data:
            print(f"{target.name} is out of date: run {Path(__file__).name}")
            return 1
        print(f"{target.name} is up to date ({len(items)} entries)")
        return 0
    target.write_bytes(data)
    print(f"wrote {target} ({len(items)} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
