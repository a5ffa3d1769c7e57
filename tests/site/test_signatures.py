"""The API reference shows each signature as Python sees it, in both editions.

(slow) A throw-away site holds the real pages of ``docs/reference/`` that
document the API (every page with an autodoc directive, as written, with its
zh_CN catalog), built in both editions with the project's ``conf.py`` and
extensions. Then, for every object those pages render:

* the signature line, as the reader sees it, is the object's
  ``inspect.signature``: each parameter's name, its kind (``*``, ``/``,
  ``*args``, ``**kwargs``) and default, in order, and nothing else (conf has
  ``autodoc_typehints = "description"``: the signature shows no annotation).
  A custom ``torch.autograd.Function`` is read as it is called: the class
  with no parameters, its ``apply`` with those of ``forward`` (no ``ctx``
  when ``setup_context`` is separate), not ``(*args, **kwargs)``;
  A method is static, a class method or neither, as in its class; a property
  or attribute shows its annotation;
* each parameter keeps its own parts (name, ``=``, default), in order;
* where the annotations went, the description's "Parameters" and "Return
  type" fields: each parameter the docstring lists, then each other one the
  signature annotates, with the docstring's type or else the annotation; and
  the return annotation, unless the docstring gives the return type.

A transform that reorders, drops or unwraps any part of a signature fails
this: ``KeepDocstringsEnglish`` once made every keyword parameter read
``=namesNone``.
"""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sitebuild
import torch
from bs4 import BeautifulSoup, Tag
from sphinx.ext.napoleon import Config as NapoleonConfig
from sphinx.ext.napoleon.docstring import NumpyDocstring
from sphinx.util.inspect import signature as sphinx_signature
from sphinx.util.typing import stringify_annotation

import autograd_notes

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
CATALOGS = ROOT / "docs" / "locale" / "zh_CN" / "LC_MESSAGES"
EDITIONS = ("en", "zh_CN")
PACKAGE = autograd_notes.__name__
# The object's name, without a signature written in the directive: Name(...).
AUTODOC = re.compile(
    r"^\s*\.\. auto(?:function|class|method|attribute)::\s+([^\s(]+)", re.M
)
CURRENT = re.compile(r"^\.\. currentmodule::\s+(\S+)")


def api_pages() -> list[Path]:
    """The reference pages that document the API with autodoc."""
    pages = [
        p
        for p in sorted(REFERENCE.glob("*.*"))
        if p.suffix in (".md", ".rst") and AUTODOC.search(p.read_text())
    ]
    assert len(pages) >= 5, pages
    return pages


def directive_targets() -> set[str]:
    """Every object an ``auto*::`` directive of those pages names, in the
    module the last ``currentmodule::`` before it sets (a full path as is)."""
    targets = set()
    for page in api_pages():
        module = PACKAGE
        for line in page.read_text().splitlines():
            if found := CURRENT.match(line):
                module = found.group(1)
            elif found := AUTODOC.match(line):
                name = found.group(1)
                full = name.startswith(PACKAGE + ".")
                targets.add(name if full else f"{module}.{name}")
    return targets


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both editions of a site of the API pages, built with the project's
    configuration, each where ``docs/build.py`` puts it; nothing executed."""
    root = sitebuild.make_site(tmp_path_factory.mktemp("signatures"))
    docs = root / "docs"
    (docs / "page.md").unlink()
    (docs / "reference").mkdir()
    catalogs = docs / "locale" / "zh_CN" / "LC_MESSAGES" / "reference"
    catalogs.mkdir(parents=True)
    for page in api_pages():
        shutil.copy(page, docs / "reference")
        shutil.copy(CATALOGS / "reference" / f"{page.stem}.po", catalogs)
    toctree = "".join(f"reference/{page.stem}\n" for page in api_pages())
    (docs / "index.md").write_text(f"# Site\n\n```{{toctree}}\n{toctree}```\n")
    for language in EDITIONS:
        # Not strict: the other pages of this tiny site have no catalogs, and
        # the reference pages link to pages it does not have. What is checked
        # is the HTML of the reference pages.
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-D", "plot_gallery=0"]
        cmd += ["-D", f"language={language}", str(docs)]
        cmd += [str(docs / "_build" / sitebuild.OUTDIRS[language])]
        result = subprocess.run(
            cmd, capture_output=True, text=True, cwd=root, timeout=600
        )
        assert result.returncode == 0, result.stdout + result.stderr
    return root


def pages_of(site: Path, language: str) -> dict[str, BeautifulSoup]:
    out = site / "docs" / "_build" / sitebuild.OUTDIRS[language] / "reference"
    return {
        page.stem: BeautifulSoup(
            (out / f"{page.stem}.html").read_text(encoding="utf-8"), "html.parser"
        )
        for page in api_pages()
    }


# -- What Python says ------------------------------------------------------------


def resolve(dotted: str) -> tuple[Any, type | None, Any]:
    """(the object, the class it belongs to or None, the class's raw attribute)."""
    assert dotted.startswith(PACKAGE + "."), dotted
    obj: Any = autograd_notes
    owner = raw = None
    for part in dotted.removeprefix(PACKAGE + ".").split("."):
        if inspect.isclass(obj):
            # A dataclass field without a default is no class attribute.
            owner, raw = obj, inspect.getattr_static(obj, part, None)
        else:
            owner = raw = None
        obj = getattr(obj, part, None)
    return obj, owner, raw


def is_custom_function(obj: Any) -> bool:
    return (
        inspect.isclass(obj)
        and issubclass(obj, torch.autograd.Function)
        and obj is not torch.autograd.Function
    )


def reader_signature(obj: Any, raw: Any) -> inspect.Signature:
    """``inspect.signature`` as a reader calls the object: without a method's
    ``self`` (a class method's ``cls`` is bound already), no annotations. A
    custom autograd Function is never instantiated (no parameters); its
    ``apply`` takes ``forward``'s inputs."""
    if is_custom_function(obj):
        return inspect.Signature()
    owner = getattr(obj, "__self__", None)
    if getattr(obj, "__name__", "") == "apply" and is_custom_function(owner):
        sig = inspect.signature(owner.forward)
        params = list(sig.parameters.values())
        if owner.setup_context is torch.autograd.Function.setup_context:
            params = params[1:]  # forward(ctx, ...): apply has no ctx
        return sig.replace(
            parameters=[p.replace(annotation=p.empty) for p in params],
            return_annotation=sig.empty,
        )
    sig = inspect.signature(obj)
    params = list(sig.parameters.values())
    if raw is not None and inspect.isfunction(raw):  # a plain method
        params = params[1:]
    return sig.replace(
        parameters=[p.replace(annotation=p.empty) for p in params],
        return_annotation=sig.empty,
    )


def parameter_list(sig: inspect.Signature) -> list[str]:
    """The entries of the rendered parameter list: each parameter as Python
    writes it, with the ``/`` and ``*`` markers where Python puts them."""
    entries: list[str] = []
    params = list(sig.parameters.values())
    for i, param in enumerate(params):
        before = params[i - 1].kind if i else None
        after = params[i + 1].kind if i + 1 < len(params) else None
        if param.kind is param.KEYWORD_ONLY and before not in (
            param.KEYWORD_ONLY,
            param.VAR_POSITIONAL,
        ):
            entries.append("*")
        entries.append(str(param))
        if param.kind is param.POSITIONAL_ONLY and after is not param.POSITIONAL_ONLY:
            entries.append("/")
    return entries


def shown(annotation: Any) -> str:
    """An annotation as the page shows it: Sphinx's short form
    (``~torch.Tensor`` reads ``Tensor``)."""
    text = stringify_annotation(annotation, "smart")
    return re.sub(r"~(?:\w+\.)*(\w+)", r"\1", text)


def recorded_annotations(obj: Any) -> dict[str, str]:
    """Parameter (and ``"return"``) -> annotation as shown, as autodoc records
    them for ``autodoc_typehints = "description"``."""
    sig = sphinx_signature(obj)
    found = {
        p.name: shown(p.annotation)
        for p in sig.parameters.values()
        if p.annotation is not p.empty
    }
    if sig.return_annotation is not sig.empty:
        found["return"] = shown(sig.return_annotation)
    return found


@dataclass
class Docstring:
    """What a numpy docstring says about parameters and return type."""

    params: list[str] = field(default_factory=list)  # in the docstring's order
    types: dict[str, str] = field(default_factory=dict)
    rtype: str | None = None


def docstring_fields(obj: Any, what: str) -> Docstring:
    """The parameters and types the docstring gives, read as napoleon reads them."""
    lines = NumpyDocstring(
        inspect.cleandoc(obj.__doc__ or ""), NapoleonConfig(), what=what, obj=obj
    ).lines()
    doc = Docstring()
    for line in lines:
        if m := re.match(r":param (\S+):", line):
            doc.params.append(m.group(1).replace("\\", ""))
        elif m := re.match(r":type (\S+): (.*)", line):
            doc.types[m.group(1).replace("\\", "")] = plain(m.group(2))
        elif m := re.match(r":rtype: (.*)", line):
            doc.rtype = plain(m.group(1))
    return doc


def plain(rst: str) -> str:
    """A type as a docstring writes it, as text: roles and literals unwrapped."""
    rst = re.sub(r":[\w:]+:`~(?:[\w.]*\.)?([^`.]+)`", r"\1", rst)
    rst = re.sub(r":[\w:]+:`([^`]+)`", r"\1", rst)
    return " ".join(rst.replace("``", "").replace("*", "").split())


# -- What the page shows ---------------------------------------------------------


def text_of(node: Tag) -> str:
    return " ".join(node.get_text().split())


def signature_line(dt: Tag) -> str:
    """The signature as read, without "[source]" and the "#" link."""
    copy = BeautifulSoup(str(dt), "html.parser")
    for link in copy.select("a.headerlink, a:has(span.viewcode-link)"):
        link.decompose()
    return copy.get_text().replace("\n", "").strip()


def described_objects(soup: BeautifulSoup) -> list[tuple[str, str, Tag, Tag]]:
    """(object type, full name, signature ``dt``, description ``dd``) of
    each object the page documents."""
    found = []
    for dl in soup.select("dl.py"):
        kind = next(c for c in dl["class"] if c != "py")
        dt = dl.find("dt", recursive=False)
        dd = dl.find("dd", recursive=False)
        assert isinstance(dt, Tag), dl
        assert isinstance(dd, Tag), dl
        found.append((kind, str(dt["id"]), dt, dd))
    return found


def rendered_parameter(em: Tag) -> str:
    """A parameter from its parts: name (``n``), operators (``o``), default.
    A part of no such kind is shown with a ``?`` before it."""
    parts = []
    for span in em.find_all("span", recursive=False):
        known = {"n", "o", "default_value"} & set(span.get("class") or [])
        parts.append(("" if known else "?") + span.get_text())
    return "".join(parts)


def field_entries(dd: Tag, labels: tuple[str, ...]) -> list[str]:
    """The text of each entry of the description's field called ``labels``."""
    for fields in dd.find_all("dl", class_="field-list", recursive=False):
        for name in fields.find_all("dt", recursive=False):
            if text_of(name).rstrip(":") in labels:
                body = name.find_next_sibling("dd")
                assert isinstance(body, Tag)
                items = body.select(":scope > ul > li > p") or body.select(":scope > p")
                return [text_of(p) for p in items]
    return []


# Field names in English and as Sphinx's own zh_CN catalog has them.
PARAMETERS = ("Parameters", "参数")
RETURN_TYPE = ("Return type", "返回类型")
# Before a parameter's description: an en dash, or "--" without smartquotes.
DESCRIPTION = re.compile(r" (–|--) .*", re.S)


def kind_marker(kind: str, raw: Any) -> str:
    if isinstance(raw, staticmethod):
        return "static "
    if isinstance(raw, classmethod):
        return "classmethod "
    return {"class": "class ", "property": "property "}.get(kind, "")


def differences(kind: str, fullname: str, dt: Tag, dd: Tag) -> list[str]:
    """How the rendered object differs from what Python says about it."""
    obj, owner, raw = resolve(fullname)
    line = signature_line(dt)
    name = fullname.rsplit(".", 1)[1]
    where = f"{fullname} ({kind})"
    if kind in {"attribute", "property"}:
        if kind == "property":
            annotation = recorded_annotations(obj.fget)["return"]
        else:
            annotation = shown(typing.get_type_hints(owner)[name])
        want = f"{kind_marker(kind, raw)}{name}: {annotation}"
        return [] if line == want else [f"{where}: shows {line!r}, not {want!r}"]

    problems = []
    sig = reader_signature(obj, raw)
    params = str(sig)
    if kind == "class" and not sig.parameters:
        params = ""  # Sphinx shows a class without "()"
    prename = "" if owner is not None else fullname.rsplit(".", 1)[0] + "."
    want = f"{kind_marker(kind, raw)}{prename}{name}{params}"
    if line != want:
        problems.append(f"{where}: shows {line!r}, not {want!r}")
    rendered = [rendered_parameter(em) for em in dt.select("em.sig-param")]
    if rendered != parameter_list(sig):
        problems.append(f"{where}: parameters {rendered}, not {parameter_list(sig)}")

    # The annotations, moved to the description.
    what = "class" if kind == "class" else "method" if owner else "function"
    doc = docstring_fields(obj, what)
    annotations = recorded_annotations(obj)
    names = doc.params + [p for p in annotations if p not in [*doc.params, "return"]]
    want_entries = []
    for param in names:
        type_ = doc.types.get(param, annotations.get(param))
        want_entries.append(param if type_ is None else f"{param} ({type_})")
    entries = [DESCRIPTION.sub("", entry) for entry in field_entries(dd, PARAMETERS)]
    if entries != want_entries:
        problems.append(f"{where}: Parameters {entries}, not {want_entries}")
    unknown = {n.lstrip("*") for n in names} - set(inspect.signature(obj).parameters)
    if unknown:
        problems.append(f"{where}: documents parameters it does not have: {unknown}")
    rtype = doc.rtype or annotations.get("return")
    if kind == "class" and rtype == "None":
        rtype = None  # a class's "-> None" (of __init__) is not shown
    want_rtype = [] if rtype is None else [rtype]
    if field_entries(dd, RETURN_TYPE) != want_rtype:
        problems.append(
            f"{where}: Return type {field_entries(dd, RETURN_TYPE)}, not {want_rtype}"
        )
    return problems


# -- The tests -------------------------------------------------------------------


def test_conf_moves_annotations_to_the_description() -> None:
    """What the signature test expects where (update it with this setting)."""
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert re.search(r'^autodoc_typehints = "description"$', conf, re.M)
    assert re.search(r"^napoleon_numpy_docstring = True$", conf, re.M)


@pytest.mark.parametrize("language", EDITIONS)
def test_every_documented_object_is_rendered(site: Path, language: str) -> None:
    rendered = {
        fullname
        for soup in pages_of(site, language).values()
        for _, fullname, _, _ in described_objects(soup)
    }
    missing = directive_targets() - rendered
    assert not missing, f"documented but not on the {language} pages: {missing}"


@pytest.mark.parametrize("language", EDITIONS)
def test_every_signature_matches_inspect(site: Path, language: str) -> None:
    problems: list[str] = []
    checked = 0
    for page, soup in pages_of(site, language).items():
        for kind, fullname, dt, dd in described_objects(soup):
            problems += [f"{page}: {p}" for p in differences(kind, fullname, dt, dd)]
            checked += 1
    assert checked >= len(directive_targets()), checked
    assert not problems, f"{len(problems)} differences in {checked} objects:\n" + (
        "\n".join(problems)
    )
