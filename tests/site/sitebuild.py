"""A throw-away copy of the docs: the project's real configuration, tiny content.

Shared by the slow tests that build a site (``test_strict_build.py``,
``test_translations.py``): one small gallery script and one executed page,
built with the project's real ``docs/conf.py``, ``docs/_ext``, ``_static``,
``_templates`` and term list, in either edition, beside a copy of the
package (``src/``, whose wheel the build publishes).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from autograd_site import siteconfig

ROOT = Path(__file__).resolve().parents[2]

GOOD_EXAMPLE = '''\
"""
A tiny example
==============

It prints, and shows an expected warning by catching it.
"""

# %%
import warnings

import torch

x = torch.ones(2, requires_grad=True)
y = x * 3
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _ = y.grad  # reading .grad of y warns
print(type(y.grad_fn).__name__, caught[0].category.__name__)
'''

GOOD_PAGE = """\
---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

# A page

See {doc}`tutorials/index`.

```{code-cell} python
print(1 + 1)
```
"""

INDEX = """\
# Site

```{toctree}
tutorials/index
page
```
"""


def make_site(root: Path) -> Path:
    """Write a minimal site using the project's real configuration."""
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    shutil.copy(ROOT / "constraints.txt", root / "constraints.txt")
    # The build publishes the wheel of the package beside it (sitewheel).
    for name in ("README.md", "LICENSE"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(
        ROOT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__")
    )
    docs = root / "docs"
    docs.mkdir()
    shutil.copy(ROOT / "docs" / "conf.py", docs / "conf.py")
    with (docs / "conf.py").open("a") as conf:
        # The site's old tutorial addresses point at its own tutorials,
        # which this tiny copy does not have.
        conf.write("\nrediraffe_redirects = {}\n")
    # inventories/: PyTorch's, which conf.py requires (intersphinx, offline).
    for folder in ("_ext", "_static", "_templates", "inventories"):
        shutil.copytree(
            ROOT / "docs" / folder,
            docs / folder,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    # The zh_CN edition reads its term list (search words) and site.po (our
    # code's words: the footer, "Solution" before an exercise's answer); the
    # pages' catalogs are the site's own, made by the tests that need them.
    terms = docs / "locale" / "zh_CN" / "terms.csv"
    (terms.parent / "LC_MESSAGES").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "locale" / "zh_CN" / "terms.csv", terms)
    site_po = Path("zh_CN") / "LC_MESSAGES" / "site.po"
    shutil.copy(ROOT / "docs" / "locale" / site_po, docs / "locale" / site_po)
    (docs / "index.md").write_text(INDEX)
    (docs / "page.md").write_text(GOOD_PAGE)
    gallery = root / "gallery"
    gallery.mkdir()
    (gallery / "GALLERY_HEADER.rst").write_text("Tutorials\n=========\n")
    (gallery / "01_example.py").write_text(GOOD_EXAMPLE)
    return root


# Where docs/build.py puts each edition, below docs/_build.
OUTDIRS = {
    lang: f"html/{e.folder}".rstrip("/") for lang, e in siteconfig.EDITIONS.items()
}


def build(
    root: Path, language: str = "en", *options: str
) -> subprocess.CompletedProcess[str]:
    """A strict HTML build of one edition, where ``docs/build.py`` puts it."""
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html"]
    if language != "en":
        cmd += ["-D", f"language={language}"]
    cmd += [*options]
    cmd += [str(root / "docs"), str(root / "docs" / "_build" / OUTDIRS[language])]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=root, timeout=300)


def assert_fails(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"build passed but should have failed:\n{output}"
    for needle in needles:
        assert needle in output, f"{needle!r} not in build output:\n{output}"


def assert_passes(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
