"""Re-execute everything when what the outputs depend on has changed.

sphinx-gallery re-runs an example only when its source changes, and myst-nb's
cache keys on the notebook's code. Neither notices a new torch or a change
to ``autograd_notes``. This extension fingerprints both (plus the
constraints file) and, when the fingerprint moves, deletes the cached
outputs so the build executes every example and page again.
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


def fingerprint(root: Path) -> str:
    """Hash of torch's version, the package, the pins and the docs config."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    files = [*sorted((root / "src").rglob("*.py")), root / "constraints.txt"]
    # The configuration shapes the generated pages too (footers, hooks).
    files += [root / "docs" / "conf.py", *sorted((root / "docs" / "_ext").glob("*.py"))]
    for path in files:
        if path.exists():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def invalidate(app: Sphinx, config: Config) -> None:
    srcdir = Path(app.srcdir)
    stamp = Path(app.outdir).parent / ".outputs-fingerprint"
    current = fingerprint(srcdir.parent)
    if stamp.exists() and stamp.read_text() == current:
        return
    stale = [srcdir / d for d in config.sphinx_gallery_conf["gallery_dirs"]]
    stale += [Path(app.outdir).parent / ".jupyter_cache", Path(app.doctreedir)]
    for path in stale:
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
