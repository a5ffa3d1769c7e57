"""PyTorch's intersphinx inventory, derived offline from its documentation sources.

sphobjinv and Sphinx read and write inventories, but none derives one from sources.
``--source PYTORCH/docs/source`` writes ``torch-X.Y.listing.txt`` (the objects the
``PAGES`` declare); then the listing, resolved in the installed torch as autosummary
and autodoc do, becomes ``torch-X.Y.inv``. ``--check``: fail if it is out of date.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
PAGES = (  # noqa: SIM905
    "torch.md tensors.md tensor_attributes.rst autograd.md func.api.md nn.md "
    "nn.functional.md optim.md checkpoint.md testing.md"
).split()
DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:py:)?([\w-]+)::\s*(.*?)\s*$")
OPTION = re.compile(r"^\s+:([\w-]+):\s*(.*?)\s*$")
OBJECT = re.compile(r"(?:auto)?(?:class|function|method|attribute|exception)|data")


class Row(NamedTuple):
    """One object a page declares (``members``: the class documents its members)."""

    page: str
    directive: str
    module: str  # the current module
    name: str  # as written
    members: bool

    def line(self) -> str:
        return "\t".join([*self[:4], "members" if self.members else ""])

    @classmethod
    def parse(cls, line: str) -> Row:
        page, directive, module, name, flags = line.split("\t")
        return cls(page, directive, module, name, flags == "members")


class Entry(NamedTuple):
    name: str
    role: str
    uri: str


def torch_series() -> str:
    import torch

    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


def listing_path(series: str) -> Path:
    return HERE / f"torch-{series}.listing.txt"


def inventory_path(series: str) -> Path:
    return HERE / f"torch-{series}.inv"


def read_page(path: Path, templates: Path) -> Iterator[Row]:
    """The objects one page declares, in order."""
    page, lines = path.name.rsplit(".", 1)[0], path.read_text("utf-8").splitlines()
    module, i = "", 0
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
        if directive in ("currentmodule", "automodule", "module"):
            module = argument
            if directive != "currentmodule" and "noindex" not in options:
                yield Row(page, "module", "", argument, False)
        elif directive == "autosummary":
            names = []  # the body: entries, maybe between blank lines
            while i < len(lines) and not lines[i].strip().startswith("```"):
                line = lines[i]
                if line.strip() and len(line) - len(line.lstrip()) <= len(indent):
                    break
                if line.strip() and not line.strip().startswith((":", "..")):
                    names.append(line.strip())
                i += 1
            template = templates / options.get("template", "")
            members = template.is_file() and ":members:" in template.read_text("utf-8")
            if "toctree" in options:  # else it links to pages made elsewhere
                yield from (Row(page, directive, module, n, members) for n in names)
        elif OBJECT.fullmatch(directive):
            name = argument.split("(", 1)[0].strip()
            yield Row(page, directive, module, name, "members" in options)


def read_listing(path: Path) -> list[Row]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Row.parse(line) for line in lines if line and not line.startswith("#")]


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
    """Whether the package's attribute of that name is not the module (gradcheck)."""
    package, _, name = module.rpartition(".")
    if not package:
        return False
    attribute = getattr(importlib.import_module(package), name, None)
    return attribute is not None and attribute is not importlib.import_module(module)


def role_of(obj: Any, parent: Any, name: str) -> str:
    if inspect.ismodule(obj):
        return "py:module"
    # A class attribute holding a class (LazyLinear.cls_to_become) is an attribute.
    alias = inspect.isclass(obj) and obj.__name__ != name.rpartition(".")[2]
    if inspect.isclass(obj) and not (alias and inspect.isclass(parent)):
        return "py:class"
    if not inspect.isclass(parent):
        return "py:function" if callable(obj) else "py:data"
    if isinstance(obj, property):
        return "py:property"
    if not alias and (isinstance(obj, staticmethod | classmethod) or callable(obj)):
        return "py:method"
    return "py:attribute"


def resolve(row: Row) -> str | None:
    """The full name, as autosummary and autodoc find it."""
    name = row.name.lstrip("~")
    absolute = name.startswith("torch.") or not row.module
    candidates = [name] if absolute else [f"{row.module}.{name}", name]
    return next((full for full in candidates if lookup(full) is not None), None)


def documented_members(cls: type) -> Iterator[tuple[str, Any]]:
    """A class's own public members with their own docstring (autodoc ``:members:``)."""
    for name, value in vars(cls).items():
        doc = getattr(value, "__doc__", None)
        own = isinstance(doc, str) and doc.strip() and doc != type(value).__doc__
        if not name.startswith("_") and own:
            yield name, value


def entries(rows: Iterable[Row]) -> tuple[list[Entry], list[Row]]:
    """The inventory entries the listing gives, and the rows torch lacks."""
    out: dict[tuple[str, str], Entry] = {}
    missing = []
    for row in rows:
        if row.directive == "module":
            found = lookup(row.name)
            found = None if found is None or shadowed(row.name) else found
            full, uri = row.name, f"{row.page}.html#module-{row.name}"
        else:
            full = resolve(row) or ""
            found = lookup(full) if full else None
            page = f"generated/{full}" if row.directive == "autosummary" else row.page
            uri = f"{page}.html#{full}"
        if found is None:
            missing.append(row)
            continue
        obj, parent = found
        role = role_of(obj, parent, full)
        out.setdefault((role, full), Entry(full, role, uri))
        if row.members and inspect.isclass(obj):
            for member, value in documented_members(obj):
                name = f"{full}.{member}"
                page = uri.split("#")[0]
                entry = Entry(name, role_of(value, obj, name), f"{page}#{name}")
                out.setdefault((entry.role, name), entry)
    return sorted(out.values()), missing


def inventory_bytes(items: list[Entry], series: str) -> bytes:
    header = (
        f"# Sphinx inventory version 2\n# Project: PyTorch\n# Version: {series}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    body = ""
    for item in items:
        uri = item.uri
        if uri.endswith("#" + item.name):  # Sphinx's short form
            uri = uri[: -len(item.name)] + "$"
        body += f"{item.name} {item.role} 1 {uri} -\n"
    return header.encode() + zlib.compress(body.encode(), 9)


def read_inventory(path: Path) -> dict[str, tuple[str, str]]:
    """``{name: (role, uri)}`` of an inventory this script wrote."""
    body = zlib.decompress(path.read_bytes().split(b"\n", 4)[4]).decode()
    found = {}
    for line in body.splitlines():
        name, role, _, uri, _ = line.split(" ")
        found[name] = (role, uri[:-1] + name if uri.endswith("$") else uri)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, help="pytorch/pytorch's docs/source")
    parser.add_argument("--ref", default="v2.13.0", help="the tag or commit read")
    parser.add_argument("--check", action="store_true", help="fail if out of date")
    args = parser.parse_args(argv)
    series = torch_series()
    listing, target = listing_path(series), inventory_path(series)
    if args.source:
        templates = args.source / "_templates"
        rows = [r for p in PAGES for r in read_page(args.source / p, templates)]
        listing.write_text(
            f"# What PyTorch {series}'s documentation sources declare, per page:\n"
            f"# pytorch/pytorch docs/source @ {args.ref}, "
            "read by make_torch_inventory.py.\n"
            "# page\tdirective\tcurrent module\tname as written\tmembers\n"
            + "".join(r.line() + "\n" for r in rows)
        )
        print(f"wrote {listing}")
    if not listing.exists():
        print(f"no {listing.name}: run with --source PYTORCH/docs/source first")
        return 1
    items, missing = entries(read_listing(listing))
    for row in missing:
        print(f"left out: {row.page}: {row.directive} {row.module} {row.name}")
    data = inventory_bytes(items, series)
    if args.check:
        fresh = target.exists() and target.read_bytes() == data
        print(f"{target.name}: {'up to date' if fresh else 'out of date: run me'}")
        return 0 if fresh else 1
    target.write_bytes(data)
    print(f"wrote {target} ({len(items)} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
