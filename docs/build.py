"""Build both editions of the site: ``python docs/build.py [sphinx options]``.

1. English into ``docs/_build/html``. This build executes every tutorial and
   page, or reuses their cached outputs when nothing they depend on changed
   (``freshness``).
2. zh_CN into ``docs/_build/html/zh_CN``, from the same sources with
   ``-D language=zh_CN``. It reuses what the English build executed, so
   nothing runs twice. It starts as soon as the English build has read (and
   so executed) every page, while English writes its pages; its log is
   printed after the English one, so the two do not interleave. (Every
   edition of pyproject.toml's table after the first is built so, one after
   another: ``siteconfig.EDITIONS``.)

Both are strict (``-W --keep-going``) and read on every core (``-j auto``).
When no input changed since the last successful build (the sources, the
catalogs, the package, the pins, the toolchain, the options, torch's
version), nothing runs at all.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from autograd_site import siteconfig  # noqa: E402
from autograd_site.freshness import fingerprint, unchanged  # noqa: E402

BUILD = ROOT / "docs" / "_build"
EDITIONS = {lang: BUILD / "html" / e.folder for lang, e in siteconfig.EDITIONS.items()}
# Written inside docs/ by the build itself: not inputs.
GENERATED = {"_build", "tutorials", "generated", "jupyter_execute", "__pycache__"}
STAMP = BUILD / ".site-fingerprint"
# The first edition is the language the sources are written in; the others
# translate them (pyproject.toml's table of editions).
SOURCE, *TRANSLATED = EDITIONS
# Read after the build, by docs/pdf.py: not inputs of the HTML.
AFTERWARDS = {Path("docs/pdf.py"), Path("docs/pdf.css")}


def inputs() -> list[Path]:
    """Every file the two builds read."""
    found = [ROOT / "pyproject.toml", ROOT / "constraints.txt"]
    for folder in ("docs", "gallery", "src"):
        for path in sorted((ROOT / folder).rglob("*")):
            relative = path.relative_to(ROOT)
            skip = set(relative.parts) & GENERATED or path.suffix == ".mo"
            if not skip and relative not in AFTERWARDS:
                found.append(path)
    return found


def toolchain() -> str:
    """The Python and the docs extra's packages the build runs with, by version.

    Not the interpreter's path: the docs, integration and browser sessions each
    have a venv made from the same pins (constraints.txt, in the fingerprint),
    and a build made in one is current in the others instead of made again.
    """
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = pyproject["project"]["optional-dependencies"]["docs"]
    found = [f"python {sys.version_info.major}.{sys.version_info.minor}"]
    for name in sorted(re.match(r"[\w.-]+", req).group() for req in wanted):
        try:
            found.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} missing")
    return "\n".join(found)


def sphinx(language: str, options: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    # -u: unbuffered, so a log shows the English lines in the order they
    # happened relative to this script's own.
    cmd = [sys.executable, "-u", "-m", "sphinx", "-W", "--keep-going", "-j", "auto"]
    cmd += ["-b", "html", "-D", f"language={language}", *options]
    cmd += [str(ROOT / "docs"), str(EDITIONS[language])]
    return subprocess.Popen(cmd, cwd=ROOT, text=True, **kwargs)


def heading(language: str) -> str:
    out = EDITIONS[language].relative_to(ROOT)
    return f"docs: building the {language} edition into {out}"


def wait_until_read(build: subprocess.Popen[str], since: int) -> None:
    """Return once ``build`` has pickled its environment (read every page) or exited.

    Sphinx pickles the environment after reading every page and before
    writing any, so from then on the executed outputs are complete.
    """
    pickle = EDITIONS[SOURCE] / ".doctrees" / "environment.pickle"
    while build.poll() is None:
        if pickle.exists() and pickle.stat().st_mtime_ns >= since:
            return
        time.sleep(0.2)


def move(source: Path, target: Path) -> None:
    if source.exists():
        shutil.rmtree(target, ignore_errors=True)
        source.rename(target)


def main(options: list[str]) -> int:
    BUILD.mkdir(parents=True, exist_ok=True)
    # One build at a time: two test files may ask for the site at once (each
    # build would write over the other's); the second then finds it current.
    with (BUILD / ".build-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build(options)


def translate(language: str, options: list[str], source: subprocess.Popen[str]) -> int:
    """Build the edition ``language`` while ``source`` writes its pages; print
    its log after the source edition's, so the two do not interleave.

    myst-nb writes executed notebooks next to the output folder: this
    edition's would land inside the source edition's site (unlinked, random
    cell ids), so between builds they wait out in ``_build``.
    """
    stash = BUILD / f"jupyter_execute_{language}"
    executed = EDITIONS[language].parent / "jupyter_execute"
    with tempfile.TemporaryFile("w+") as log:
        print(f"docs: every page read; the {language} build starts now", flush=True)
        move(stash, executed)
        edition = sphinx(language, options, stdout=log, stderr=subprocess.STDOUT)
        if source.wait():
            edition.kill()
        failed = edition.wait() or source.returncode
        move(executed, stash)
        log.seek(0)
        print(heading(language) + "\n" + log.read(), end="", flush=True)
    return failed


def build(options: list[str]) -> int:
    current = fingerprint(ROOT, inputs(), toolchain(), *options)
    built = all((out / "index.html").exists() for out in EDITIONS.values())
    if built and unchanged(STAMP, current):
        print("docs: no input changed since the last build; nothing to do.")
        return 0
    STAMP.unlink(missing_ok=True)
    since = time.time_ns()
    print(heading(SOURCE), flush=True)
    source = sphinx(SOURCE, options)
    wait_until_read(source, since)
    if source.poll():  # failed before it finished reading
        return 1
    # One at a time: each writes its executed notebooks where the next would.
    failed = [lang for lang in TRANSLATED if translate(lang, options, source)]
    if failed or source.wait():  # (a site of one edition waits here)
        return 1
    STAMP.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
