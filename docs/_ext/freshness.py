"""No stale output: what the pages show is what the current sources make.

Jobs (``config-inited`` handlers, before anything is read):

* :func:`invalidate`: sphinx-gallery re-runs an example only when its source
  changes, and myst-nb's cache keys on the notebook's code. Neither notices a
  new torch or a change to ``autograd_notes``. This fingerprints both (plus
  the constraints file and conf.py) and, when the fingerprint moves, deletes
  the cached outputs so the build executes every example and page again. A
  change to an extension in ``_ext/``, a template or an interface catalog
  only makes Sphinx read and write every page again;
* :func:`prune_removed` deletes the generated pages (and images) of gallery
  scripts that were renamed or removed: sphinx-gallery never deletes them.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

logger = logging.getLogger(__name__)


def fingerprint(root: Path, files: list[Path]) -> str:
    """Hash of torch's version and of ``files`` (paths and contents)."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for path in files:
        if path.exists():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def execution_inputs(root: Path) -> list[Path]:
    """What the executed outputs depend on: the package, the pins, conf.py."""
    return [
        *sorted((root / "src").rglob("*.py")),
        root / "constraints.txt",
        root / "docs" / "conf.py",
    ]


def invalidate(app: Sphinx, config: Config) -> None:
    """Delete executed outputs whose inputs changed; re-read after _ext edits."""
    srcdir = Path(app.srcdir)
    root = srcdir.parent
    build = Path(config.nb_execution_cache_path).parent  # shared by both editions
    stale_outputs = [srcdir / d for d in config.sphinx_gallery_conf["gallery_dirs"]]
    stale_outputs.append(Path(config.nb_execution_cache_path))
    # What shapes every page without being a page: the extensions, the
    # templates, and the catalogs of interface strings (not of a page).
    shaping = sorted((srcdir / "_ext").glob("*.py"))
    shaping += sorted((srcdir / "_templates").glob("*.html"))
    for folder in config.locale_dirs:
        for domain in ("sphinx", "booktheme"):
            shaping += sorted((srcdir / folder).glob(f"*/LC_MESSAGES/{domain}.po"))
    checks = [
        (build / ".outputs-fingerprint", execution_inputs(root), stale_outputs),
        # Each edition re-reads and rewrites every page when the outputs or
        # what shapes the pages changed (no example runs again for that). The
        # module pages too: viewcode rewrites them only when a module changes.
        (
            Path(app.doctreedir) / ".fingerprint",
            [*execution_inputs(root), *shaping],
            [Path(app.outdir) / "_modules"],
        ),
    ]
    for stamp, inputs, stale in checks:
        current = fingerprint(root, inputs)
        if stamp.exists() and stamp.read_text() == current:
            continue
        for path in [*stale, Path(app.doctreedir)]:
            if path.exists():
                logger.info("freshness: removing stale outputs in %s", path.name)
                shutil.rmtree(path)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(current)


def prune_removed(app: Sphinx, config: Config) -> None:
    """Delete generated pages of gallery scripts that were renamed or removed.

    sphinx-gallery never deletes what it generated, so a renamed script would
    otherwise leave its old page in the site.
    """
    srcdir = Path(app.srcdir)
    conf = config.sphinx_gallery_conf
    for examples, gallery in zip(
        conf["examples_dirs"], conf["gallery_dirs"], strict=True
    ):
        scripts = {p.stem for p in (srcdir / examples).glob("*.py")}
        out = srcdir / gallery
        for page in sorted(out.glob("[0-9][0-9]_*.rst")):
            if page.stem in scripts:
                continue
            logger.info("freshness: removing %s (its script is gone)", page.name)
            for path in out.glob(f"{page.stem}.*"):
                path.unlink()
            for path in (out / "images").rglob(f"sphx_glr_{page.stem}_*"):
                path.unlink()


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", invalidate, priority=100)
    app.connect("config-inited", prune_removed, priority=101)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
