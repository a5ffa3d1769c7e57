"""Run every benchmark and print the results as ratios against references.

``nox -s bench`` runs this file. Each ``bench_*.py`` beside it prints its own
table; this script adds the docs-build timings:

* a clean build of both editions (``docs/build.py``, what ``nox -s docs``
  runs), against a clean English-only build and against the time to run the
  same code as plain Python (each gallery script and the code cells of each
  executed page, one ``python`` process each, one after the other);
* that the Chinese build executed nothing (it reuses the English outputs);
* a no-change rebuild of both, which must execute nothing;
* a second clean build in another directory, whose HTML pages (both
  editions) must be byte-for-byte identical to the first one's (nothing is
  masked).

Targets are printed as PASS/MISS beside the measured ratio; nothing here
asserts, so a slow machine never fails the test suite.
"""

from __future__ import annotations

import argparse
import difflib
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIFFS = ROOT / "artifacts" / "bench-differences"  # where two clean builds differ


def pages(html: Path) -> dict[str, bytes]:
    """Every HTML page of a build, as bytes, by its path in the site."""
    return {str(p.relative_to(html)): p.read_bytes() for p in html.rglob("*.html")}


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def timed(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"command failed: {' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    return elapsed, result


def plain_python_seconds(site: Path) -> float:
    """Run each script and each executed page's code in a fresh interpreter."""
    scripts = sorted((site / "gallery").glob("[0-9][0-9]_*.py"))
    sys.path.insert(0, str(ROOT / ".ci"))
    from compat import page_cells, page_code  # every cell, as compat runs them

    docs = sorted(p for p in (site / "docs").rglob("*.md") if "_build" not in p.parts)
    pages = [(p, cells) for p in docs if (cells := page_cells(p)) is not None]
    total = 0.0
    for script in scripts:
        total += timed([sys.executable, str(script)], cwd=site)[0]
    for page, cells in pages:
        code = site / f"_page_{page.stem}.py"
        code.write_text(page_code(cells), encoding="utf-8")
        # myst-nb runs a page in its own folder; so does this.
        total += timed([sys.executable, str(code)], cwd=page.parent)[0]
    print(f"  plain Python: {len(scripts)} scripts + {len(pages)} pages")
    return total


GENERATED = {"_build", "tutorials", "generated", "jupyter_execute"}


def built_output(folder: str, names: list[str]) -> list[str]:
    """What a build wrote into docs/ (the catalogs' own tutorials/ is a source)."""
    if Path(folder).is_relative_to(ROOT / "docs" / "locale"):
        return [name for name in names if name.endswith(".mo")]
    return [name for name in names if name in GENERATED]


def copy_site(site: Path) -> None:
    """Copy what the docs build reads into ``site``, without any built output."""
    site.mkdir()
    for name in ("docs", "gallery", "src"):
        shutil.copytree(ROOT / name, site / name, ignore=built_output)
    # README.md and LICENSE go into the wheel the site publishes (sitewheel).
    for name in ("pyproject.toml", "constraints.txt", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, site / name)


def ran_nothing(log: str) -> bool:
    """A build log in which sphinx-gallery and myst-nb executed nothing."""
    return "executed 0 out of 0" in log and "Executing" not in log


def docs_build() -> None:
    print("\n== Docs build (copies of the site, built from scratch)")
    english = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "auto"]
    english += ["-b", "html", "docs", "docs/_build/html"]
    both = [sys.executable, "docs/build.py"]  # what nox -s docs runs
    with tempfile.TemporaryDirectory() as tmp:
        solo, site, twin = (Path(tmp) / name for name in ("solo", "site", "twin"))
        for folder in (solo, site, twin):
            copy_site(folder)
        english_only, _ = timed(english, cwd=solo)
        clean, result = timed(both, cwd=site)
        zh_log = result.stdout.partition("building the zh_CN edition")[2]
        first = pages(site / "docs/_build/html")  # before a rebuild touches it
        rebuild, again = timed(both, cwd=site)
        skipped = "nothing to do" in again.stdout
        # The same, with the up-to-date check defeated: Sphinx's own
        # incremental rebuild of both editions.
        (site / "docs/_build/.site-fingerprint").unlink()
        sphinx_rebuild, again = timed(both, cwd=site)
        plain = plain_python_seconds(site)
        timed(both, cwd=twin)
        second = pages(twin / "docs/_build/html")
    differing = sorted(
        p for p in first.keys() | second.keys() if first.get(p) != second.get(p)
    )
    zh_pages = sum(p.startswith("zh_CN/") for p in first)
    print(f"  clean build, English only      {english_only:7.1f} s")
    print(f"  clean build, both editions     {clean:7.1f} s")
    print(f"  plain serial execution         {plain:7.1f} s")
    rows = [
        ("both / English only", clean / english_only, 1.3),
        ("both / plain execution", clean / plain, 1.0),
    ]
    for name, ratio, target in rows:
        ok = verdict(ratio <= target)
        print(f"  {name:<30} {ratio:7.2f}x   target <= {target:.2f}x   {ok}")
    print(
        f"  zh build executed nothing: {ran_nothing(zh_log)}   "
        f"{verdict(ran_nothing(zh_log))}"
    )
    ok = verdict(rebuild <= 8 and skipped)
    print(f"  no-change rebuild, both        {rebuild:7.1f} s   target <= 8 s   {ok}")
    print(f"    (inputs unchanged, nothing run: {skipped})")
    ok = verdict(ran_nothing(again.stdout))
    print(
        f"  Sphinx's own no-change rebuild {sphinx_rebuild:7.1f} s   "
        f"executed nothing: {ran_nothing(again.stdout)}   {ok}"
    )
    print(
        f"  two clean builds: {len(first)} HTML pages ({zh_pages} in zh_CN), "
        f"{len(differing)} not byte-identical {differing}   {verdict(not differing)}"
    )
    for page in differing:
        show_difference(page, first.get(page, b""), second.get(page, b""))


def show_difference(page: str, first: bytes, second: bytes) -> None:
    """Print where two builds of a page differ; keep the full diff on disk."""
    diff = list(
        difflib.unified_diff(
            first.decode().splitlines(),
            second.decode().splitlines(),
            "first build/" + page,
            "second build/" + page,
            lineterm="",
        )
    )
    out = DIFFS / (page.replace("/", "__") + ".diff")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(diff) + "\n", encoding="utf-8")
    print(f"    {page}: {out.relative_to(ROOT)}")
    for line in diff[2:14]:
        print(f"      {line[:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-docs", action="store_true", help="skip the docs build")
    parser.add_argument(
        "--only",
        metavar="NAME",
        help="run only bench_NAME.py (e.g. masked_linear), or only the docs build "
        "(docs)",
    )
    args = parser.parse_args()
    for bench in sorted(Path(__file__).parent.glob("bench_*.py")):
        if args.only and bench.stem != f"bench_{args.only}":
            continue
        print(f"\n== {bench.stem}")
        runpy.run_path(str(bench), run_name="__main__")
    if not args.skip_docs and args.only in (None, "docs"):
        docs_build()


if __name__ == "__main__":
    main()
