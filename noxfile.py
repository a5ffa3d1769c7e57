"""Every task of the project, as a nox session. ``nox -l`` lists them.

All environments install with ``constraints.txt`` so every build and test
run uses the same torch (2.13.0, CPU) and the same Sphinx stack.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import nox

PYTHON = "3.11"
ROOT = Path(__file__).parent
# The oldest torch the package supports and the newest installable here.
SETTINGS = nox.project.load_toml("pyproject.toml")["tool"]["autograd-notes"]
TORCH_RANGE = SETTINGS["verified-torch"]
# The editions that translate the sources (all but the first of the table).
TRANSLATED = list(SETTINGS["editions"])[1:]
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
SPHINX_ARGS = ("-W", "--keep-going", "-b", "html", "docs", "docs/_build/html")
LOCALE = ("-d", "docs/locale", "-l", ",".join(TRANSLATED), "-w", "76")
# A build whose PDFs are printed links them (docs/_ext/autograd_site/sitepdf.py).
PRINTED = ("-D", "site_pdf=1")

nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


def install(session: nox.Session, *requirements: str) -> None:
    """Install with the constraints, skipping pip when nothing has changed.

    A reused environment remembers a hash of what it was built from, so a
    no-change ``nox -s docs`` spends its time in Sphinx, not in pip.
    """
    recipe = " ".join(requirements).encode()
    for name in ("pyproject.toml", "constraints.txt"):
        recipe += (ROOT / name).read_bytes()
    digest = hashlib.sha256(recipe).hexdigest()
    stamp = Path(session.virtualenv.location) / ".installed"
    if stamp.exists() and stamp.read_text() == digest:
        return
    session.install(*requirements, *CONSTRAINTS)
    stamp.write_text(digest)


# Two workers, a test file each at a time (its module fixtures are built once).
# tests/site/test_pdf.py checks the printed PDFs: `nox -s pdf` and `browser` run it.
PYTEST = ("pytest", "-n", "2", "--dist", "loadfile", "--ignore=tests/site/test_pdf.py")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The fast loop: package tests, doctests, site checks that need no full build."""
    install(session, "-e", ".[test,docs]")
    session.run(*PYTEST, "-m", "not slow", *session.posargs)


@nox.session(python=PYTHON, default=False)
def integration(session: nox.Session) -> None:
    """The slow checks: throw-away site builds, every download run in a fresh
    venv, the signatures against a real build, huge graphs freed (``slow``)."""
    install(session, "-e", ".[test,docs]")
    session.run(*PYTEST, "-m", "slow", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build both editions, strictly: docs/_build/html and docs/_build/html/zh_CN."""
    install(session, "-e", ".[docs]")
    session.run("python", "docs/build.py", *session.posargs)


@nox.session(python=PYTHON, default=False)
def translations(session: nox.Session) -> None:
    """Update the zh_CN catalogs from the English text; list what to translate."""
    install(session, "-e", ".[docs]")
    session.run(
        "sphinx-build",
        "-q",
        "-j",
        "auto",
        "-b",
        "gettext",
        "docs",
        "docs/_build/gettext",
    )
    session.run("sphinx-intl", "update", "-p", "docs/_build/gettext", *LOCALE)
    # Lists every message that is new, changed (fuzzy) or breaks a rule.
    session.run("python", "docs/locale/check_catalogs.py", success_codes=range(101))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, and mypy --strict on src/."""
    install(session, "-e", ".", "ruff", "mypy", "matplotlib", "networkx")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session(python=PYTHON, default=False)
def browser(session: nox.Session) -> None:
    """Build both editions and their PDFs and check the PDFs (all of `nox -s pdf`),
    then serve the site on 127.0.0.1 and check it in Chromium."""
    install(session, "-e", ".[docs,browser,pdf]")
    session.run("python", "docs/build.py", *PRINTED)
    session.run("python", "docs/pdf.py")  # the pages link the PDFs
    # What `nox -s pdf` checks, on the PDFs just printed (CI runs this session
    # only: one build, one printing), in the same run as the browser suite, so
    # it overlaps the checks that browser_tests/conftest.py runs in threads.
    session.run("pytest", "tests/site/test_pdf.py", "browser_tests", *session.posargs)


@nox.session(python=PYTHON, default=False)
def pdf(session: nox.Session) -> None:
    """Build both editions, print each as one PDF with Chromium, check them."""
    install(session, "-e", ".[docs,browser,pdf]")
    session.run("python", "docs/build.py", *PRINTED)
    hosted = os.environ.get("READTHEDOCS") or os.environ.get("GITHUB_ACTIONS")
    if hosted and not shutil.which("chromium"):  # no Debian Chromium there
        session.run("playwright", "install", "chromium")
    session.run("python", "docs/pdf.py")
    session.run("pytest", "tests/site/test_pdf.py", *session.posargs)


@nox.session(name="docs-live", python=PYTHON, default=False)
def docs_live(session: nox.Session) -> None:
    """Rebuild and reload the site in a browser while you edit."""
    install(session, "-e", ".[docs]", "sphinx-autobuild")
    session.run(
        "sphinx-autobuild", *SPHINX_ARGS, "--watch", "gallery", "--watch", "src"
    )


@nox.session(python=PYTHON, default=False)
def compat(session: nox.Session) -> None:
    """Unit tests, doctests, tutorials and pages under the oldest and newest torch."""
    install(session, "myst-nb")  # reads the pages' cells as the docs build does
    session.run("python", ".ci/compat.py", *(session.posargs or TORCH_RANGE))


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Speed and memory benchmarks, printed as ratios against references."""
    # bench_compare.py: torchviz and TorchLens side by side with to_html, and
    # our page timed in Debian's Chromium through Playwright;
    # bench_memory_compare.py: saved_memory against TorchLens's memory figure;
    # bench_scale.py: a million nodes, any graph (saved_memory, diff_graphs,
    # to_html as ratios to walk_graph; pages' first paint in Chromium).
    install(session, "-e", ".[docs]", "torchviz", "torchlens", "playwright")
    session.run("python", "bench/run.py", *session.posargs)
