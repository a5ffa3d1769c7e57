"""Build both editions of the site: ``python docs/build.py [sphinx options]``.

1. English into ``docs/_build/html``. This build executes every tutorial and
   page (or reuses their cached outputs when nothing they depend on changed).
2. Simplified Chinese into ``docs/_build/html/zh_CN``, from the same sources
   with ``-D language=zh_CN``. It reuses what the English build executed, so
   nothing runs a second time.

Both are strict (``-W --keep-going``) and read pages on every core
(``-j auto``). When no input changed since the last successful build (the
sources, the catalogs, the package, the pins, the options), nothing is run
at all.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "docs" / "_build"
EDITIONS = {"en": BUILD / "html", "zh_CN": BUILD / "html" / "zh_CN"}
# Generated inside docs/ by the build itself: not inputs.
GENERATED = {"_build", "tutorials", "generated", "jupyter_execute", "__pycache__"}
STAMP = BUILD / ".site-fingerprint"


def inputs() -> list[Path]:
    """Every file the two builds read."""
    found = [ROOT / "pyproject.toml", ROOT / "constraints.txt"]
    for folder in ("docs", "gallery", "src"):
        for path in sorted((ROOT / folder).rglob("*")):
            parts = set(path.relative_to(ROOT).parts)
            if path.is_file() and not parts & GENERATED and path.suffix != ".mo":
                found.append(path)
    return found


def fingerprint(options: list[str]) -> str:
    digest = hashlib.sha256(" ".join([sys.executable, *options]).encode())
    for path in inputs():
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def main(options: list[str]) -> int:
    current = fingerprint(options)
    built = all((out / "index.html").exists() for out in EDITIONS.values())
    if built and STAMP.exists() and STAMP.read_text() == current:
        print("docs: no input changed since the last build; nothing to do.")
        return 0
    STAMP.unlink(missing_ok=True)
    for language, out in EDITIONS.items():
        cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "auto"]
        cmd += ["-b", "html", "-D", f"language={language}", *options]
        cmd += [str(ROOT / "docs"), str(out)]
        print(f"docs: building the {language} edition into {out.relative_to(ROOT)}")
        if subprocess.run(cmd, cwd=ROOT).returncode:
            return 1
    STAMP.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
