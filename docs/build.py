"""Build both editions of the site: ``python docs/build.py [sphinx options]``.

1. English into ``docs/_build/html``. This build executes every tutorial and
   page (or reuses their cached outputs when nothing they depend on changed).
2. Simplified Chinese into ``docs/_build/html/zh_CN``, from the same sources
   with ``-D language=zh_CN``. It reuses what the English build executed, so
   nothing runs a second time. It starts as soon as the English build has
   read (and so executed) everything, while the English pages are written;
   its log is printed after the English one.

Both are strict (``-W --keep-going``) and read pages on every core
(``-j auto``). When no input changed since the last successful build (the
sources, the catalogs, the package, the pins, the options), nothing is run
at all.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "docs" / "_build"
EDITIONS = {"en": BUILD / "html", "zh_CN": BUILD / "html" / "zh_CN"}
# Generated inside docs/ by the build itself: not inputs.
GENERATED = {"_build", "tutorials", "generated", "jupyter_execute", "__pycache__"}
STAMP = BUILD / ".site-fingerprint"
# Read after the build, by docs/pdf.py: not inputs of the HTML.
AFTERWARDS = {Path("docs/pdf.py"), Path("docs/pdf.css")}


def inputs() -> list[Path]:
    """Every file the two builds read."""
    found = [ROOT / "pyproject.toml", ROOT / "constraints.txt"]
    for folder in ("docs", "gallery", "src"):
        for path in sorted((ROOT / folder).rglob("*")):
            parts = set(path.relative_to(ROOT).parts)
            if (
                path.is_file()
                and not parts & GENERATED
                and path.suffix != ".mo"
                and path.relative_to(ROOT) not in AFTERWARDS
            ):
                found.append(path)
    return found


def fingerprint(options: list[str]) -> str:
    digest = hashlib.sha256(" ".join([sys.executable, *options]).encode())
    for path in inputs():
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def sphinx(language: str, options: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    # -u: unbuffered, so a log file shows the English lines in the order
    # they happened relative to this script's own.
    cmd = [sys.executable, "-u", "-m", "sphinx", "-W", "--keep-going", "-j", "auto"]
    cmd += ["-b", "html", "-D", f"language={language}", *options]
    cmd += [str(ROOT / "docs"), str(EDITIONS[language])]
    return subprocess.Popen(cmd, cwd=ROOT, text=True, **kwargs)


def heading(language: str) -> str:
    out = EDITIONS[language].relative_to(ROOT)
    return f"docs: building the {language} edition into {out}"


def wait_until_read(build: subprocess.Popen[str], since: int) -> None:
    """Return once ``build`` has read every page (it then pickles its
    environment, before writing any page), or has exited."""
    pickle = EDITIONS["en"] / ".doctrees" / "environment.pickle"
    while build.poll() is None:
        if pickle.exists() and pickle.stat().st_mtime_ns >= since:
            return
        time.sleep(0.2)


def main(options: list[str]) -> int:
    current = fingerprint(options)
    built = all((out / "index.html").exists() for out in EDITIONS.values())
    if built and STAMP.exists() and STAMP.read_text() == current:
        print("docs: no input changed since the last build; nothing to do.")
        return 0
    STAMP.unlink(missing_ok=True)
    since = time.time_ns()
    print(heading("en"), flush=True)
    english = sphinx("en", options)
    wait_until_read(english, since)
    if english.poll():  # failed before it finished reading
        return 1
    with tempfile.TemporaryFile("w+") as log:
        print("docs: every page read; the zh_CN build starts now", flush=True)
        chinese = sphinx("zh_CN", options, stdout=log, stderr=subprocess.STDOUT)
        if english.wait():
            chinese.kill()
            chinese.wait()
            return 1
        failed = chinese.wait()
        log.seek(0)
        print(heading("zh_CN") + "\n" + log.read(), end="", flush=True)
    if failed:
        return 1
    STAMP.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
