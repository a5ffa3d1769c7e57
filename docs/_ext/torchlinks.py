"""PyTorch names link to PyTorch's documentation, in prose and in code.

``conf.py`` gives intersphinx (which this extension sets up) the inventory
of the running torch's documentation (``docs/inventories/``, a local file).
This extension does the rest:

* **Prose references under a re-exported name.** PyTorch documents some
  objects under another name than the one readers write:
  ``torch.nn.Parameter`` is documented as ``torch.nn.parameter.Parameter``,
  ``torch.set_grad_enabled`` as ``torch.autograd.grad_mode.set_grad_enabled``.
  A Python reference intersphinx did not find is looked up again
  (:func:`missing_reference`, a ``missing-reference`` handler) under the
  name the running torch gives the object (``__module__.__qualname__``), and
  a bare ``Tensor``/``Module``/... in a docstring's types under ``torch.`` and
  ``torch.nn.``. A name found in neither stays unresolved, so nitpicky mode
  fails the build on it.
* **Code spans in prose** (:class:`ProseCodeLinks`). An inline code span that
  is just a PyTorch name, or a call of one (`` `torch.no_grad()` ``,
  `` `nn.Linear(4, 2)` ``, `` `Tensor.backward()` ``), links to that name's
  page like a reference would. ``nn.``, ``F.`` and ``Tensor.`` are read as
  the site's code writes them: ``torch.nn.``, ``torch.nn.functional.``,
  ``torch.Tensor.``. Spans in headings, links and signatures stay as they
  are.
* **Code on every page that is not a tutorial** (:class:`PageCodeLinks`).
  sphinx-gallery links the names in the tutorials' code through the py
  domain and intersphinx. The same is done here for the other pages' Python
  code: myst-nb's code cells, code blocks and ``>>>`` examples (docstrings'
  too). Every name the page's code imports or uses (``torch.autograd.grad``,
  ``nn.Linear``, ``F.mse_loss``) is resolved the way sphinx-gallery resolves
  it, and the block is rendered with the links, with sphinx-gallery's own
  machinery (version pinned in ``constraints.txt``).
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.ext.intersphinx import InventoryAdapter
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_gallery._doctree_links import (
    _add_linenos,
    _lexer_name,
    _Resolver,
    _tokenize_and_link,
    code_links_block,
)
from sphinx_gallery.backreferences import identify_names
from sphinx_gallery.py_source_parser import Block

# Where a bare class name in a docstring's types lives in torch.
BARE_NAME_MODULES = ("torch", "torch.nn")
# Code cells and code blocks, and the ``>>>`` examples of docstrings.
CODE_BLOCKS = (nodes.literal_block, nodes.doctest_block)
PROMPT = re.compile(r"^(?:>>> |\.\.\. |>>>$|\.\.\.$)")


def canonical_name(dotted: str) -> str | None:
    """The name the running torch gives the object ``dotted`` names."""
    import torch

    parts = dotted.split(".")
    if parts[0] != "torch":
        return None
    obj: Any = torch
    try:
        for part in parts[1:]:
            obj = getattr(obj, part)
    except AttributeError:
        return None
    if inspect.ismodule(obj):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    return f"{module}.{qualname}"


ALIASES = {"nn": "torch.nn", "F": "torch.nn.functional", "Tensor": "torch.Tensor"}
# A code span that is a dotted name, or a call of one.
SPAN = re.compile(r"((?:torch|nn|F|Tensor)(?:\.\w+)+)(?:\(.*\))?", re.DOTALL)


def torch_candidates(target: str) -> list[str]:
    """Names to look ``target`` up under, in order."""
    target = target.lstrip("~.")
    if target.startswith("torch."):
        found = canonical_name(target)
        return list(dict.fromkeys(name for name in (target, found) if name))
    if re.fullmatch(r"[A-Z]\w*", target):
        return [f"{module}.{target}" for module in BARE_NAME_MODULES]
    return []


_DOCUMENTED: dict[int, dict[str, tuple[str, str]]] = {}


def documented_names(env: BuildEnvironment) -> dict[str, tuple[str, str]]:
    """``{name: (documented name, uri)}`` of PyTorch's inventory, under each
    entry's own name and under the name the running torch gives its object
    (so ``torch.nn.modules.linear.Linear`` finds ``torch.nn.Linear``)."""
    inventory = InventoryAdapter(env).named_inventory["torch"]
    if id(inventory) in _DOCUMENTED:
        return _DOCUMENTED[id(inventory)]
    names: dict[str, tuple[str, str]] = {}
    canonical: dict[str, tuple[str, str]] = {}
    for role, objects in inventory.items():
        if not role.startswith("py:"):
            continue
        for name, item in objects.items():
            uri = str(getattr(item, "uri", None) or item[2])
            names.setdefault(name, (name, uri))
            other = canonical_name(name) if role != "py:module" else None
            # Only the object's own name, not an attribute that holds it
            # (torch.nn.LazyLinear.cls_to_become is Linear); the shortest wins.
            if not other or other.rpartition(".")[2] != name.rpartition(".")[2]:
                continue
            if other not in canonical or len(name) < len(canonical[other][0]):
                canonical[other] = (name, uri)
    for other, found in canonical.items():
        names.setdefault(other, found)
    _DOCUMENTED.clear()
    _DOCUMENTED[id(inventory)] = names
    return names


def torch_target(env: BuildEnvironment, target: str) -> tuple[str, str] | None:
    """``(documented name, uri)`` of the PyTorch object ``target`` names."""
    names = documented_names(env)
    for name in torch_candidates(target):
        if name in names:
            return names[name]
    return None


def missing_reference(
    app: Sphinx, env: BuildEnvironment, node: nodes.Element, contnode: nodes.Node
) -> nodes.reference | None:
    """Resolve a Python reference to torch that intersphinx missed."""
    if node.get("refdomain") != "py":
        return None
    found = torch_target(env, node["reftarget"])
    if found is None:
        return None
    name, uri = found
    reference = nodes.reference("", "", internal=False, refuri=uri, reftitle=name)
    reference += contnode
    return reference


class ProseCodeLinks(SphinxPostTransform):
    """Link the inline code spans that name a PyTorch object."""

    default_priority = 20  # after references are resolved
    formats = ("html",)
    SKIP = (nodes.reference, nodes.title, addnodes.desc_signature, nodes.literal_block)

    def run(self, **kwargs: Any) -> None:
        for literal in list(self.document.findall(nodes.literal)):
            if "xref" in literal["classes"]:
                continue
            if any(isinstance(a, self.SKIP) for a in _ancestors(literal)):
                continue
            match = SPAN.fullmatch(literal.astext())
            if not match:
                continue
            head, _, rest = match.group(1).partition(".")
            found = torch_target(self.env, f"{ALIASES.get(head, head)}.{rest}")
            if found is None:
                continue
            name, uri = found
            reference = nodes.reference(
                "",
                "",
                internal=False,
                refuri=uri,
                reftitle=name,
                classes=["torch-name"],
            )
            literal.replace_self(reference)
            reference += literal


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


def _parse(code: str) -> ast.Module | None:
    """The code of a block, without ``>>>`` prompts or IPython magics."""
    lines = code.splitlines()
    if lines and lines[0].startswith(">>>"):
        lines = [PROMPT.sub("", line) for line in lines if PROMPT.match(line)]
    lines = [line for line in lines if not line.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


class PageCodeLinks(SphinxPostTransform):
    """Link the names in the Python code of pages that are not tutorials."""

    default_priority = 6  # after sphinx-gallery's transform of tutorials (5)
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        blocks = []
        for block in self.document.findall(lambda n: isinstance(n, CODE_BLOCKS)):
            lang = block.get("language") or "default"
            if _lexer_name(lang, block.rawsource) is not None:
                blocks.append(block)
        trees = [tree for block in blocks if (tree := _parse(block.rawsource))]
        if not trees:
            return
        module = ast.Module(body=[s for t in trees for s in t.body], type_ignores=[])
        code_obj = identify_names([Block("code", "", 0)], r"(?!)", None, module)
        if not code_obj:
            return
        docname = self.env.docname
        app = getattr(self.env, "_app", None) or self.app
        gallery_conf = self.config.sphinx_gallery_conf
        resolver = _Resolver(self.env, app.builder, docname, gallery_conf)
        for block in blocks:
            code = block.rawsource
            lang = block.get("language") or "default"
            lexer_name = _lexer_name(lang, code)
            assert lexer_name is not None
            children = list(_tokenize_and_link(code, lexer_name, code_obj, resolver))
            if not any(isinstance(child, nodes.reference) for child in children):
                continue
            if block.get("linenos"):
                start = block.get("highlight_args", {}).get("linenostart", 1)
                children = _add_linenos(children, start)
            new = code_links_block(lang=lang)
            new["classes"] = block.get("classes", [])
            new += children
            block.replace_self(new)


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.intersphinx")
    app.connect("missing-reference", missing_reference, priority=900)
    app.add_post_transform(PageCodeLinks)
    app.add_post_transform(ProseCodeLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
