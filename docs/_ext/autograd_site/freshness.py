"""No stale output: what the pages show is what the current sources make.

sphinx-gallery re-runs an example only when its script changes, and
myst-nb's cache keys on a page's code. Neither notices a new torch, a change
to ``autograd_notes``, a new pin or a new ``conf.py``, and neither deletes
what it generated for a script that is gone. Two ``config-inited`` handlers,
first of all (priorities 100 and 101), before anything reads those outputs:

* :func:`invalidate` fingerprints what the executed outputs depend on (torch's
  version, the package, ``constraints.txt``, ``conf.py``) and, when that
  changes, deletes sphinx-gallery's generated pages and myst-nb's cache, so
  every example and page runs again. What only shapes the pages (the
  extensions in ``_ext/``, the templates, the theme's and our ``site``
  catalogs) makes Sphinx read and write every page again, without running
  anything;
* :func:`prune_removed` deletes the generated page and images of a gallery
  script that was renamed or removed: otherwise its old page stays in the
  site.

:func:`fingerprint` and :func:`unchanged` are also the one build fingerprint
of ``docs/build.py`` and ``docs/pdf.py``.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

logger = logging.getLogger(__name__)


def fingerprint(root: Path, files: Iterable[Path], *extra: str) -> str:
    """SHA-256 of torch's version, ``extra``, and each file's name and bytes."""
    digest = hashlib.sha256(version("torch").encode())
    for item in extra:
        digest.update(item.encode() + b"\0")
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def unchanged(stamp: Path, current: str) -> bool:
    """Whether the fingerprint written in ``stamp`` is ``current``."""
    return stamp.is_file() and stamp.read_text() == current


def invalidate(app: Sphinx, config: Config) -> None:
    """New torch, package, pin or conf.py: re-execute; new extension: re-read.

    The executed outputs are shared by both editions, so their stamp sits
    beside the cache; each edition's doctrees have their own stamp. The package
    is every file of it but ``.pyc``: its data (the view's JavaScript and CSS)
    is in what the pages execute. Sphinx re-reads a page when its source or a
    config value changes, not when an extension's code does.
    """
    srcdir = Path(app.srcdir)
    root, cache = srcdir.parent, Path(config.nb_execution_cache_path)
    package = sorted((root / "src" / "autograd_notes").rglob("*[!c]"))  # not .pyc
    executed = [*package, root / "constraints.txt", srcdir / "conf.py"]
    shaping = sorted((srcdir / "_ext").rglob("*.py"))
    shaping += sorted((srcdir / "_templates").glob("*.html"))
    for folder in config.locale_dirs:
        for domain in ("sphinx", "booktheme", "site"):
            shaping += sorted((srcdir / folder).glob(f"*/LC_MESSAGES/{domain}.po"))
    gallery = [srcdir / d for d in config.sphinx_gallery_conf["gallery_dirs"]]
    checks = [  # the outputs are shared by both editions; the doctrees are not
        (cache.parent / ".outputs-fingerprint", executed, [*gallery, cache]),
        (
            Path(app.doctreedir) / ".fingerprint",
            [*executed, *shaping],
            [Path(app.outdir) / "_modules"],  # viewcode rewrites only changed ones
        ),
    ]
    for stamp, inputs, stale in checks:
        if unchanged(stamp, current := fingerprint(root, inputs)):
            continue
        for path in [*stale, Path(app.doctreedir)]:
            if path.exists():
                logger.info("freshness: removing stale outputs in %s", path.name)
                shutil.rmtree(path)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(current)


def prune_removed(app: Sphinx, config: Config) -> None:
    """Delete the generated files of removed gallery scripts (sphinx-gallery won't)."""
    srcdir, conf = Path(app.srcdir), config.sphinx_gallery_conf
    for examples, gallery in zip(
        conf["examples_dirs"], conf["gallery_dirs"], strict=True
    ):
        scripts = {p.stem for p in (srcdir / examples).glob("*.py")}
        out = srcdir / gallery
        for page in sorted(out.glob("[0-9][0-9]_*.rst")):
            if page.stem not in scripts:
                logger.info("freshness: removing %s (its script is gone)", page.name)
                for path in out.glob(f"{page.stem}.*"):
                    path.unlink()
                for path in (out / "images").rglob(f"sphx_glr_{page.stem}_*"):
                    path.unlink()


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", invalidate, priority=100)
    app.connect("config-inited", prune_removed, priority=101)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
