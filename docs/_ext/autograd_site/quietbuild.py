"""A quiet build: progress and the result, nothing that reads as a warning.

Checked by ``tests/site/test_quietbuild.py``. Two sources of noise have no
option in Sphinx, myst-parser or myst-nb:

:func:`quiet` (``config-inited``, before any page is read) switches off both:

* myst-parser and myst-nb log their whole configuration at INFO level when
  the builder starts (``builder-inited``); their setup loggers pass warnings
  only here.
* myst-nb starts the kernel that the pages' front matter names (``python3``)
  from the first kernel spec on ``JUPYTER_PATH``. Ours, written into
  ``docs/_build/jupyter``, logs errors only (each kernel warns of unencrypted
  local TCP), flushes a cell's output once, at its end (see
  ``STREAMS_AT_CELL_END``), and draws figures as ``figures.KERNEL_ARGS`` says.

This was a function that ``conf.py`` ran at import; as an extension, reading
the configuration has no side effect.
"""

import json
import logging
import os

from ipykernel.kernelspec import get_kernel_dict
from sphinx.application import Sphinx
from sphinx.config import Config

from .figures import KERNEL_ARGS

# myst-nb merges a cell's stream chunks by stripping each one's end, so a line
# break that starts a chunk turns into a blank line: what a page shows would
# depend on when the kernel flushed. With this flush interval the kernel flushes
# a cell's output once, when the cell ends or displays something.
STREAMS_AT_CELL_END = (
    "--IPKernelApp.exec_lines="
    "import sys; sys.stdout.flush_interval = sys.stderr.flush_interval = 1e9"
)


def quiet(app: Sphinx, config: Config) -> None:
    for name in ("myst_parser.sphinx_ext.main", "myst_nb.sphinx_ext"):
        logging.getLogger(f"sphinx.{name}").setLevel(logging.WARNING)
    kernels = app.confdir / "_build" / "jupyter"
    spec = kernels / "kernels" / "python3" / "kernel.json"
    argv = ["--IPKernelApp.log_level=ERROR", STREAMS_AT_CELL_END, *KERNEL_ARGS]
    text = json.dumps(get_kernel_dict(argv), indent=1)
    if not spec.exists() or spec.read_text() != text:
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(text)
    path = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    # Ours first, once.
    os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys([str(kernels), *path]))


def setup(app: Sphinx) -> dict[str, bool]:
    app.connect("config-inited", quiet)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
