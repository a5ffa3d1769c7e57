"""Run what a reader runs under each torch: ``python .ci/compat.py 2.13.0 2.15.0``.
(``--prepare VERSION...`` only makes the venvs: CI downloads while it tests.)

For every torch version given, a venv of its own (made again when the pins
change) with that torch, the package and its test dependencies (everything
else pinned by ``constraints.txt``), then, with warnings as errors:

* the package's tests (``tests/package/``; the site's own checks, in
  ``tests/site/``, do not depend on torch's version) and ``src``'s doctests;
* every gallery script, as ``python -W error gallery/NN_name.py``;
* the code of every executed page, cell after cell in one script, as the
  page's reader would paste it: every code cell the docs build executes,
  hidden ones (``remove-cell``) included. The cells come from myst-nb's own
  reader, the one the build uses, so what runs here is what the build runs.

``nox -s compat`` runs it with pyproject.toml's ``verified-torch``. It prints a
table (and writes ``table.json``); the exit status is non-zero if anything
failed, or ran nothing, under any version.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".nox" / "compat-envs"
WORKERS = 2  # the machine's cores: pytest workers, and scripts run at once


def run(cmd: list[str], log: Path, **kwargs: object) -> bool:
    """Run ``cmd``, append its output to ``log``, return whether it passed."""
    with log.open("a") as out:
        print(f"\n$ {' '.join(cmd)}", file=out, flush=True)
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
        # The machine's pip config may cap torch below the newest release (this
        # one's: 2.14.1): a version it refuses comes from the index, with the
        # config bypassed for that one install.
        bypass = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
        if not (run(wanted_pkgs, log) or run(wanted_pkgs, log, env=bypass)):
            raise SystemExit(f"could not install torch=={version}; see {log}")
        stamp.write_text(wanted)
    return python


def pytest_counts(python: Path, log: Path, name: str, *args: str) -> str:
    """Run pytest, return ``passed/total`` (skipped tests did not pass)."""
    report = log.with_suffix(f".{name}.xml")
    cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    cmd += ["-o", "addopts=", "-W", "error", "--import-mode=importlib", *args]
    run([*cmd, f"--junit-xml={report}"], log, cwd=ROOT)
    suites = (
        list(ElementTree.parse(report).iter("testsuite")) if report.exists() else []
    )
    total = sum(int(s.get("tests", 0)) for s in suites)
    bad = ("failures", "errors", "skipped")  # a skipped test checked nothing
    failed = sum(int(s.get(k, 0)) for s in suites for k in bad)
    return f"{total - failed}/{total}"


def page_cells(page: Path) -> list[str] | None:
    """The non-empty code cells of an executed page (as myst-nb reads it), else None."""
    from myst_nb.core.read import is_myst_markdown_notebook as is_notebook
    from myst_nb.core.read import read_myst_markdown_notebook as read_notebook

    text = page.read_text(encoding="utf-8")
    if not is_notebook(text):
        return None
    cells = read_notebook(text).cells
    return [c.source for c in cells if c.cell_type == "code" and c.source.strip()]


def page_code(cells: list[str]) -> str:
    """The cells as one script, each after a numbered comment."""
    return "\n\n".join(f"# cell {i}\n{cell}" for i, cell in enumerate(cells, 1))


def check_version(python: Path, log: Path) -> dict[str, str]:
    # The venv outlives a change to the package: install it again from this
    # checkout each time, as a reader's pip would (not editable), pins untouched.
    pip = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall"]
    if not run([*pip, str(ROOT)], log):
        raise SystemExit(f"could not install the package; see {log}")
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
        with ThreadPoolExecutor(WORKERS) as pool:
            passed = list(pool.map(lambda job: run_script(python, log, *job), runs))
    results["gallery scripts"] = f"{sum(passed[: len(scripts)])}/{len(scripts)}"
    page_passed = passed[len(scripts) :]
    results["pages"] = f"{sum(page_passed)}/{len(codes)}"
    counts = [len(cells) for _, cells in codes]  # a passed page ran all its cells
    ran = sum(n for ok, n in zip(page_passed, counts, strict=True) if ok)
    results["page cells"] = f"{ran}/{sum(counts)}"
    return results


def run_script(python: Path, log: Path, script: Path, cwd: Path) -> bool:
    """``python -W error script`` in ``cwd``; its output goes to ``log`` after it.

    Each run has its own log first: the pool's runs overlap. A page's script
    stops at its first failing cell, so only a passed page ran all its cells.
    """
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
    if versions[0] == "--prepare":
        for version in versions[1:]:
            make_env(version, WORK / f"torch-{version}.prepare.log")
        return 0
    logs = {v: WORK / f"torch-{v}.log" for v in versions}
    for log in logs.values():
        log.write_text("")
    # All venvs are made at once, so the next torch (a download of about 3 GB)
    # arrives while one's checks run.
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
