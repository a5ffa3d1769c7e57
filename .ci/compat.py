"""Run what a reader runs under each supported torch, and print one table.

For every torch version given on the command line this makes a fresh virtual
environment, installs that torch and the package from its wheel (everything
else pinned by ``constraints.txt``), then runs, with warnings as errors:

* the package's tests (``tests/package/``: the site's own checks are in
  ``tests/site/`` and do not depend on torch's version) and the doctests
  of ``src/``;
* every gallery script, as ``python -W error gallery/NN_name.py``;
* the code of every executed page (``file_format: mystnb``), cell after cell
  in one process, as the page's reader would paste it: every code cell that
  the docs build executes, hidden ones (``remove-cell``) included. The cells
  come from myst-nb's own reader, the one the build uses, so what runs here
  is what the build runs (``tests/site/test_compat.py`` counts them).

Usage: ``python .ci/compat.py 2.13.0 2.15.0`` (``nox -s compat`` runs it with
pyproject.toml's ``verified-torch``).
The exit status is non-zero if anything failed under any version.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".nox" / "compat-envs"
# The machine's two cores: pytest workers, and scripts run at once.
WORKERS = 2


def run(cmd: list[str], log: Path, **kwargs: object) -> bool:
    """Run ``cmd``, append its output to ``log``, return whether it passed."""
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kwargs)  # type: ignore[call-overload]
    return bool(done.returncode == 0)


def make_env(version: str, log: Path) -> Path:
    """A venv with ``torch==version`` and the test dependencies (once per pins)."""
    env = WORK / f"torch-{version}"
    python = env / "bin" / "python"
    pins = env / "constraints.txt"  # the project's pins, except torch
    pip = [str(python), "-m", "pip", "install", "--quiet", "-c", str(pins)]
    stamp = env / ".installed"
    wanted = f"torch=={version}\n" + (ROOT / "constraints.txt").read_text()
    if not (stamp.exists() and stamp.read_text() == wanted):
        venv.create(env, with_pip=True, clear=True)
        lines = (ROOT / "constraints.txt").read_text().splitlines()
        pins.write_text("\n".join(x for x in lines if not x.startswith("torch==")))
        wanted_pkgs = [*pip, f"torch=={version}", f"{ROOT}[test]"]
        # The machine's pip config may cap torch below the newest release
        # (this workplace's caps it at 2.14.1 and serves older releases from
        # local wheels): a version it refuses comes from the index, with the
        # config bypassed for that one install.
        bypass = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
        if not (run(wanted_pkgs, log) or run(wanted_pkgs, log, env=bypass)):
            raise SystemExit(f"could not install torch=={version}; see {log}")
        stamp.write_text(wanted)
    return python


def install_package(python: Path, log: Path) -> None:
    """This package from a fresh wheel: what a reader gets from pip."""
    cmd = [str(python), "-m", "pip", "install", "--quiet", "--no-deps"]
    if not run([*cmd, "--force-reinstall", str(ROOT)], log):
        raise SystemExit(f"could not install the package; see {log}")


def pytest_counts(python: Path, log: Path, name: str, *args: str) -> str:
    """Run pytest, return ``passed/total`` (skipped tests did not pass)."""
    report = log.with_suffix(f".{name}.xml")
    cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    cmd += ["-o", "addopts=", "-W", "error", "--import-mode=importlib", *args]
    run([*cmd, f"--junit-xml={report}"], log, cwd=ROOT)
    text = report.read_text() if report.exists() else ""
    total = failed = 0
    for suite in re.finditer(r"<testsuite [^>]*>", text):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', suite.group(0)))
        total += int(attrs["tests"])
        # A skipped test checked nothing under this torch: it counts as failed.
        failed += sum(int(attrs[k]) for k in ("failures", "errors", "skipped"))
    return f"{total - failed}/{total}"


def page_cells(page: Path) -> list[str] | None:
    """The non-empty code cells of an executed page, or None for a static page.

    myst-nb's reader is the one the docs build executes the page with: it
    takes each cell's options (``:tags:``, a ``---`` block) off its source.
    """
    from myst_nb.core.read import (
        is_myst_markdown_notebook,
        read_myst_markdown_notebook,
    )

    text = page.read_text(encoding="utf-8")
    if not is_myst_markdown_notebook(text):
        return None
    cells = read_myst_markdown_notebook(text).cells
    return [c.source for c in cells if c.cell_type == "code" and c.source.strip()]


def page_code(cells: list[str]) -> str:
    """One script of the cells, each after a comment that numbers it."""
    return "\n\n".join(f"# cell {i}\n{cell}" for i, cell in enumerate(cells, 1))


def check_version(python: Path, log: Path) -> dict[str, str]:
    install_package(python, log)
    package = ["tests/package", "-n", str(WORKERS), "--dist", "loadfile"]
    results = {
        "package tests": pytest_counts(python, log, "package", *package),
        "doctests": pytest_counts(python, log, "doctests", "--doctest-modules", "src"),
    }
    scripts = sorted((ROOT / "gallery").glob("[0-9][0-9]_*.py"))
    pages = [
        p for p in sorted((ROOT / "docs").rglob("*.md")) if "_build" not in p.parts
    ]
    codes = [(p, c) for p in pages if (c := page_cells(p)) is not None]
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(s, s.parent) for s in scripts]
        for page, cells in codes:
            script = Path(tmp) / f"{page.stem}.py"
            script.write_text(page_code(cells), encoding="utf-8")
            runs.append((script, page.parent))
        # Each run has its own log: the pool's runs overlap.
        with ThreadPoolExecutor(WORKERS) as pool:
            passed = list(pool.map(lambda job: run_script(python, log, *job), runs))
    results["gallery scripts"] = f"{sum(passed[: len(scripts)])}/{len(scripts)}"
    page_passed = passed[len(scripts) :]
    results["pages"] = f"{sum(page_passed)}/{len(codes)}"
    # A page's script stops at its first failing cell: only a passed page
    # ran all of its cells.
    counts = [len(cells) for _, cells in codes]
    ran = sum(n for ok, n in zip(page_passed, counts, strict=True) if ok)
    results["page cells"] = f"{ran}/{sum(counts)}"
    return results


def run_script(python: Path, log: Path, script: Path, cwd: Path) -> bool:
    """``python -W error script`` in ``cwd``; its output goes to ``log`` after it."""
    own = log.with_suffix(f".{script.stem}.log")
    own.write_text("")
    passed = run([str(python), "-W", "error", str(script)], own, cwd=cwd)
    with log.open("a") as out:
        out.write(own.read_text())
    own.unlink()
    return passed


def main(versions: list[str]) -> int:
    if not versions:
        raise SystemExit("usage: python .ci/compat.py TORCH_VERSION [...]")
    WORK.mkdir(parents=True, exist_ok=True)
    logs = {v: WORK / f"torch-{v}.log" for v in versions}
    for log in logs.values():
        log.write_text("")
    # All environments are made at once, so the newest torch (a download of
    # about 3 GB) arrives while the oldest one's checks run.
    with ThreadPoolExecutor(len(versions)) as pool:
        envs = {v: pool.submit(make_env, v, logs[v]) for v in versions}
        table = {v: check_version(envs[v].result(), logs[v]) for v in versions}
    columns = ["package tests", "doctests", "gallery scripts", "pages", "page cells"]
    print("\n| torch | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    failed = False
    for version, row in table.items():
        print(f"| {version} | " + " | ".join(row[c] for c in columns) + " |")
        failed |= any(a != b for a, b in (row[c].split("/") for c in columns))
        failed |= any(row[c].endswith("/0") for c in columns)  # nothing ran
    (WORK / "table.json").write_text(json.dumps(table, indent=2))
    if failed:
        print(f"\nFAILED: see the logs in {WORK.relative_to(ROOT)}/")
    return int(failed)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
