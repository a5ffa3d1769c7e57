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
    """Hash of torch's version, the package sources and the pinned versions."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    files = [*sorted((root / "src").rglob("*.py")), root / "constraints.txt"]
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


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", invalidate, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
