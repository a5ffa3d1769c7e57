"""The docs build is strict: each kind of defect fails it.

Every test builds a throw-away site (the ``tiny_site`` fixture of
``conftest.py``) in a temporary directory: the project's real
``docs/conf.py`` and ``docs/_ext``, with one small gallery script and one
executed page. A baseline build must pass; then a single
defect is injected and the build must fail, naming the problem.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

# The minimal site's builds and checks, shared with test_translations.py.
from sitebuild import (
    GOOD_EXAMPLE,
    GOOD_PAGE,
    assert_fails,
    build,
)

pytestmark = pytest.mark.slow


def test_baseline_builds_then_rebuilds_without_executing(tiny_site: Path) -> None:
    first = build(tiny_site)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "executed 1 out of 1" in first.stdout
    html = (tiny_site / "docs/_build/html/tutorials/01_example.html").read_text()
    assert "MulBackward0 UserWarning" in html

    second = build(tiny_site)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "executed 0 out of 0" in second.stdout
    assert "0 added, 0 changed, 0 removed" in second.stdout
    assert "Executing" not in second.stdout


def test_a_page_prints_the_same_however_the_kernel_flushed(tiny_site: Path) -> None:
    # print() writes its text and its line break separately; when the kernel
    # flushes between the two, myst-nb's merge of the chunks made a blank line.
    page = tiny_site / "docs" / "page.md"
    cell = 'import time\nprint("first", end="")\ntime.sleep(0.5)\nprint("\\nsecond")\n'
    page.write_text(GOOD_PAGE.replace("print(1 + 1)\n", cell))
    result = build(tiny_site)
    assert result.returncode == 0, result.stdout + result.stderr
    html = (tiny_site / "docs/_build/html/page.html").read_text()
    assert re.search(r"first\nsecond\n</pre>", html), html


# `nox -s docs` runs the scripts in worker processes (``-j auto`` and
# sphinx-gallery's "parallel"); the checks must hold there as in one process.
JOBS = pytest.mark.parametrize("jobs", ["1", "2"], ids=["serial", "parallel"])


@JOBS
def test_example_that_raises_fails(tiny_site: Path, jobs: str) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    example.write_text(GOOD_EXAMPLE + "\nraise ValueError('boom from example')\n")
    assert_fails(build(tiny_site, "en", "-j", jobs), "boom from example")


@JOBS
def test_unexpected_warning_in_example_fails(tiny_site: Path, jobs: str) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    example.write_text(GOOD_EXAMPLE + "\n_ = y.grad  # uncaught non-leaf warning\n")
    result = build(tiny_site, "en", "-j", jobs)
    assert_fails(result, "UserWarning", "not a leaf Tensor")
    if jobs != "1":
        assert "generating gallery (with parallel=2)" in result.stdout


def test_broken_cross_reference_fails(tiny_site: Path) -> None:
    page = tiny_site / "docs" / "page.md"
    page.write_text(GOOD_PAGE.replace("tutorials/index", "no/such/page"))
    assert_fails(build(tiny_site), "unknown document", "no/such/page")


def test_page_cell_that_raises_fails(tiny_site: Path) -> None:
    page = tiny_site / "docs" / "page.md"
    bad_cell = "```{code-cell} python\nraise RuntimeError('boom from page')\n```\n"
    page.write_text(GOOD_PAGE + "\n" + bad_cell)
    assert_fails(build(tiny_site), "boom from page")


def test_page_cell_with_unexpected_warning_fails(tiny_site: Path) -> None:
    page = tiny_site / "docs" / "page.md"
    cell = textwrap.dedent(
        """\
        ```{code-cell} python
        import warnings
        warnings.warn("surprise from page")
        ```
        """
    )
    page.write_text(GOOD_PAGE + "\n" + cell)
    assert_fails(build(tiny_site), "stderr was found in the cell outputs")


def test_memory_address_in_output_fails(tiny_site: Path) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    example.write_text(GOOD_EXAMPLE + "\nprint(y.grad_fn)\n")
    assert_fails(build(tiny_site), "memory address in tutorials/01_example.html")


def test_timing_in_output_fails(tiny_site: Path) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    example.write_text(GOOD_EXAMPLE + "\nprint('took 0.25 seconds')\n")
    assert_fails(build(tiny_site), "timing in tutorials/01_example.html")


def test_build_machine_path_in_output_fails(tiny_site: Path) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    example.write_text(GOOD_EXAMPLE + "\nprint(torch.__file__)\n")
    assert_fails(build(tiny_site), "build-machine path")


def test_new_pins_re_execute_every_example(tiny_site: Path) -> None:
    assert build(tiny_site).returncode == 0
    with (tiny_site / "constraints.txt").open("a") as pins:
        pins.write("# a deliberate upgrade\n")
    again = build(tiny_site)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "executed 1 out of 1" in again.stdout
    assert "Executing notebook" in again.stdout


EXERCISE = """
# %%
# Exercises
# ---------
#
# **1. Predict.** What is ``y.requires_grad``?
#
# **Solution**

# %%
print(y.requires_grad)
# sphinx_gallery_start_ignore
assert y.requires_grad is ANSWER
# sphinx_gallery_end_ignore
"""


def test_expected_error_that_stops_raising_fails(tiny_site: Path) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    code = (
        "\nfrom autograd_notes import expect_error\n"
        "with expect_error(RuntimeError, 'does not require grad'):\n"
        "    y.sum().backward()  # y requires grad: nothing is raised\n"
    )
    example.write_text(GOOD_EXAMPLE + code)
    assert_fails(build(tiny_site), "expected RuntimeError, but nothing was raised")


def test_false_hidden_check_fails(tiny_site: Path) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    hidden = (
        "\n# sphinx_gallery_start_ignore\n"
        "assert y.is_leaf, 'hidden claim is false'\n"
        "# sphinx_gallery_end_ignore\n"
    )
    example.write_text(GOOD_EXAMPLE + hidden)
    assert_fails(build(tiny_site), "hidden claim is false")


def test_solution_is_collapsed_and_a_wrong_one_fails(tiny_site: Path) -> None:
    example = tiny_site / "gallery" / "01_example.py"
    example.write_text(GOOD_EXAMPLE + EXERCISE.replace("ANSWER", "True"))
    result = build(tiny_site)
    assert result.returncode == 0, result.stdout + result.stderr
    html = (tiny_site / "docs/_build/html/tutorials/01_example.html").read_text()
    details = html[html.index('<details class="solution">') :]
    details = details[: details.index("</details>")]
    assert "<summary>Solution</summary>" in details
    # the solution's code (PyTorch names in it are links now)
    assert "print(y.requires_grad)" in re.sub(r"<[^>]+>", "", details)
    assert "sphx-glr-script-out" in details  # the printed answer is inside too
    assert "ANSWER" not in details  # its hidden check is not shown

    example.write_text(GOOD_EXAMPLE + EXERCISE.replace("ANSWER", "False"))
    assert_fails(build(tiny_site), "AssertionError")


def test_edit_link_points_at_the_gallery_script(tiny_site: Path) -> None:
    result = build(tiny_site)
    assert result.returncode == 0, result.stdout + result.stderr
    html = (tiny_site / "docs/_build/html/tutorials/01_example.html").read_text()
    assert "/edit/main/gallery/01_example.py" in html
    assert "docs/tutorials/01_example" not in html


def test_only_a_build_whose_pdfs_are_printed_links_them(tiny_site: Path) -> None:
    # `nox -s docs` prints no PDF, so its pages link none: no dead link.
    page = tiny_site / "docs" / "page.md"
    page.write_text(
        GOOD_PAGE.replace("# A page\n", "# A page\n\n{sitepdf}`PDF <en>`\n")
    )
    result = build(tiny_site)
    assert result.returncode == 0, result.stdout + result.stderr
    for html in (tiny_site / "docs/_build/html").rglob("*.html"):
        text = html.read_text()
        assert "_static/pdf/" not in text, html.name
        assert "download-pdf-button" not in text, html.name  # nor a print entry
    # `nox -s pdf` and `nox -s browser` build with -D site_pdf=1, then print.
    result = build(tiny_site, "en", "-D", "site_pdf=1")  # the same doctrees: re-read
    assert result.returncode == 0, result.stdout + result.stderr
    html = (tiny_site / "docs/_build/html/page.html").read_text()
    assert html.count("_static/pdf/autograd-notes-en.pdf") == 2  # menu, role
