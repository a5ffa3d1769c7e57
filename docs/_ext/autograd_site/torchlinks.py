"""PyTorch names link to PyTorch's documentation, in prose and in code.

``conf.py`` gives intersphinx the inventory of the running torch's
documentation (``docs/inventories/``, a local file: the build stays
offline). Three gaps remain, and this extension fills them:

* **Code blocks.** sphinx-gallery links the names in the tutorials' code;
  the other pages' code (myst-nb's cells, code blocks, docstrings' ``>>>``
  examples) is linked by ``sphinx_codeautolink``, which this extension sets
  up and configures: :func:`configure` (``config-inited``) makes a page's
  cells read as one script (a cell sees the imports above it) and each one
  start with ``import torch``, as the doctests do; :func:`pycon` reads a
  ``>>>`` example without its doctest flags, as the page shows it;
  :func:`skip_tutorials` (``doctree-read``) keeps it off the tutorials,
  which sphinx-gallery has linked already; :func:`picklable_config`
  (``builder-inited``) gives the config back the name of :func:`pycon`
  after codeautolink has imported it.
* **Names under another name.** PyTorch documents some objects under a name
  readers do not write (``torch.nn.Parameter`` is documented as
  ``torch.nn.parameter.Parameter``), and codeautolink finds an object under
  its own name (``torch.nn.modules.linear.Linear``). :func:`read_names`
  (``builder-inited``, after ``intersphinx`` has read the inventory) indexes
  the inventory under both names, and gives codeautolink its
  ``codeautolink_inventory_map``. :func:`missing_reference`
  (``missing-reference``, after intersphinx has tried) resolves a Python
  reference intersphinx missed through that index, and a bare ``Tensor`` or
  ``Module`` in a docstring's types under ``torch.`` and ``torch.nn.``; a
  name found nowhere stays unresolved, and nitpicky mode fails on it.
* **Code spans in prose.** Neither library links them. :class:`ProseCodeLinks`
  links an inline span that is a PyTorch name or a call of one
  (`` `torch.no_grad()` ``, `` `nn.Linear(4, 2)` ``), reading ``nn.``, ``F.``
  and ``Tensor.`` as the site's code writes them; spans in headings, links,
  signatures and code blocks stay as they are.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.ext import doctest
from sphinx.ext.intersphinx import InventoryAdapter
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_codeautolink import clean_pycon
from sphinx_codeautolink.extension.directive import SkipMarker

BARE_NAME_MODULES = ("torch", "torch.nn")


def canonical_name(dotted: str) -> str | None:
    """The name the running torch gives the object ``dotted`` names.

    ``__module__.__qualname__``: an object re-exported as ``torch.X`` is
    often documented where it is defined, and its own names say where.
    """
    import torch

    parts = dotted.split(".")
    if parts[0] != "torch":
        return None
    try:
        obj = functools.reduce(getattr, parts[1:], torch)
    except AttributeError:
        return None
    if inspect.ismodule(obj):
        return obj.__name__
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", 0)
    ok = isinstance(module, str) and isinstance(name, str)
    return f"{module}.{name}" if ok else None


ALIASES = {"nn": "torch.nn", "F": "torch.nn.functional", "Tensor": "torch.Tensor"}
SPAN = re.compile(r"((?:torch|nn|F|Tensor)(?:\.\w+)+)(?:\(.*\))?", re.DOTALL)

# {name: (documented name, uri)}, under inventory and under torch's own names.
NAMES: dict[str, tuple[str, str]] = {}


def read_names(app: Sphinx) -> None:
    """:data:`NAMES`, and codeautolink's map from the latter names to the former."""
    canonical: dict[str, tuple[str, str]] = {}
    for role, objects in InventoryAdapter(app.env).named_inventory["torch"].items():
        for name, item in objects.items() if role.startswith("py:") else ():
            uri = str(getattr(item, "uri", None) or item[2])
            NAMES.setdefault(name, (name, uri))
            other = canonical_name(name) if role != "py:module" else None
            # Not an attribute holding it (LazyLinear.cls_to_become); shortest wins.
            if not other or other.rpartition(".")[2] != name.rpartition(".")[2]:
                continue
            if other not in canonical or len(name) < len(canonical[other][0]):
                canonical[other] = (name, uri)
    for other, found in canonical.items():
        NAMES.setdefault(other, found)
    app.config.codeautolink_inventory_map = {
        name: documented
        for name, (documented, _) in NAMES.items()
        if name != documented
    }


def torch_target(target: str) -> tuple[str, str] | None:
    """``(documented name, uri)`` of the PyTorch object ``target`` names."""
    target = target.lstrip("~.")
    if target.startswith("torch."):
        names = [target, canonical_name(target)]
    elif re.fullmatch(r"[A-Z]\w*", target):
        names = [f"{module}.{target}" for module in BARE_NAME_MODULES]
    else:
        return None
    return next((NAMES[n] for n in names if n in NAMES), None)


def missing_reference(
    app: Sphinx, env: BuildEnvironment, node: nodes.Element, contnode: nodes.Node
) -> nodes.reference | None:
    """Resolve a Python reference to torch that intersphinx missed."""
    if node.get("refdomain") != "py":
        return None
    found = torch_target(node["reftarget"])
    return _link(found, contnode) if found else None


def _link(found: tuple[str, str], child: nodes.Node, **kw: Any) -> nodes.reference:
    name, uri = found
    return nodes.reference(
        "", "", child, internal=False, refuri=uri, reftitle=name, **kw
    )


class ProseCodeLinks(SphinxPostTransform):
    """Link the inline code spans that name a PyTorch object."""

    default_priority = 20  # after references are resolved
    formats = ("html",)
    SKIP = (nodes.reference, nodes.title, addnodes.desc_signature, nodes.literal_block)

    def run(self, **kwargs: Any) -> None:
        for literal in list(self.document.findall(nodes.literal)):
            if "xref" in literal["classes"]:
                continue
            parent = literal.parent
            while parent is not None and not isinstance(parent, self.SKIP):
                parent = parent.parent
            if parent is not None:
                continue
            match = SPAN.fullmatch(literal.astext())
            if not match:
                continue
            head, _, rest = match.group(1).partition(".")
            found = torch_target(f"{ALIASES.get(head, head)}.{rest}")
            if found is None:
                continue
            literal.replace_self(
                _link(found, literal.deepcopy(), classes=["torch-name"])
            )


def pycon(source: str) -> tuple[str, str]:
    """A ``>>>`` example as the page shows it: codeautolink reads it before Sphinx
    trims its doctest flags."""
    source = doctest.doctestopt_re.sub("", doctest.blankline_re.sub("", source))
    return clean_pycon(source)


def skip_tutorials(app: Sphinx, doctree: nodes.document) -> None:
    """sphinx-gallery links the tutorials' code: ``.. autolink-skip:: file`` there."""
    gallery = app.config.sphinx_gallery_conf["gallery_dirs"]
    if any(app.env.docname.startswith(f"{folder}/") for folder in gallery):
        doctree.insert(0, SkipMarker("file"))


def configure(app: Sphinx, config: Any) -> None:
    config.codeautolink_concat_default = True  # a cell sees the imports above it
    config.codeautolink_global_preface = "import torch"  # as the doctests
    picklable_config(app)


def picklable_config(app: Sphinx, *args: Any) -> None:
    """A fresh dict: codeautolink imports the functions into the config's one.

    Its ``builder-inited`` handler replaces each name in
    ``codeautolink_custom_blocks`` by the function, in place. Run after it,
    this leaves codeautolink its functions and the config the names, which
    pickle with the environment.
    """
    app.config.codeautolink_custom_blocks = {"pycon": "autograd_site.torchlinks.pycon"}


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.intersphinx")
    # After intersphinx reads the inventory, before codeautolink reads the map.
    app.connect("builder-inited", read_names)
    app.setup_extension("sphinx_codeautolink")
    app.connect("config-inited", configure, priority=100)
    # After codeautolink's own builder-inited (500), which imports the blocks.
    app.connect("builder-inited", picklable_config, priority=600)
    app.connect("doctree-read", skip_tutorials, priority=400)  # before codeautolink
    # After intersphinx's own missing-reference handler (500) has tried.
    app.connect("missing-reference", missing_reference, priority=900)
    app.add_post_transform(ProseCodeLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
