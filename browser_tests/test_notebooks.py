"""``to_html``'s output as notebook readers meet it, in JupyterLab and Notebook 7.

One server per frontend for this module (127.0.0.1, a token, a temporary
folder for the notebooks, Jupyter's config, data and settings; no browser
of its own), stopped at the end. The notebooks are made here from the
package under test: a cell that ends in ``to_html(...)``, executed and saved
with its outputs, once untrusted and once trusted (``jupyter trust``); and
tutorial 10's notebook, converted from ``gallery/10_...py`` the way
``autograd_site/downloads.py`` does it (without the install cell) and executed.

* Untrusted (a saved notebook reopened, or shared), the output is sanitised:
  what shows is the text tree (``format_graph``'s) and the line that says how
  to see the view, each label once, nothing run together.
* Trusted, the view renders its boxes in its frame, which takes the height
  the view asks for; the text is hidden; printed, the static picture shows;
  a search pans the view to a match that was out of sight.
* In JupyterLab's dark theme (and in the site's), the view is dark.
* Tutorial 10's notebook shows no traceback and no path.

Screenshots of the untrusted and the dark cases go to ``artifacts/``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
import pytest
from playwright.sync_api import BrowserContext, Frame, Page

ROOT = Path(__file__).resolve().parents[1]
# The cell of the notebook: a small graph with a branch and names.
CELL = """\
import torch
from autograd_notes import to_html

w = torch.ones(3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
loss = ((w * 2 + b).tanh() * w).sigmoid().exp().sin().cos().mean()
to_html(loss, names={"w": w, "b": b, "loss": loss})
"""
# A window tall enough for the whole graph at scale 1 (taller than the 600 px
# the frame starts at).
TALL = {"width": 1280, "height": 1200}
FRONTENDS = {"lab": "lab/tree/{}", "notebook": "notebooks/{}"}
OUTPUT = ".jp-OutputArea-output"
TIMEOUT = 120_000  # ms: a loaded machine starts JupyterLab slowly
# Off-screen cells are in the page (JupyterLab draws only those in view by default).
# No question about Jupyter's news over the outputs either.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
}
THEMES = "@jupyterlab/apputils-extension:themes"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((harness.LOCAL_HOST, 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    """A Jupyter server of one frontend, and how to reach it."""

    url: str  # ends in "/"
    token: str
    folder: Path

    def page_url(self, frontend: str, name: str) -> str:
        """The notebook ``name`` in ``frontend`` (JupyterLab: its tab alone)."""
        reset = "reset&" if frontend == "lab" else ""
        path = FRONTENDS[frontend].format(name)
        return f"{self.url}{path}?{reset}token={self.token}"

    def api(self, method: str, path: str, body: object) -> None:
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=60):
            pass


def _jupyter_env(home: Path) -> dict[str, str]:
    """Jupyter's config, data, runtime and settings in ``home``, none of the user's."""
    env = dict(os.environ)
    for name, sub in [
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ("IPYTHONDIR", "ipython"),
    ]:
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / sub)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def _execute(path: Path, env: dict[str, str]) -> None:
    """Run every cell of ``path`` in a kernel and save the outputs in it."""
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
         "--execute", "--inplace", "--ExecutePreprocessor.timeout=900", str(path)],
        check=True, env=env, capture_output=True, timeout=1200,
    )  # fmt: skip


def _tutorial_notebook(path: Path) -> None:
    """Tutorial 10 as the build converts it (downloads.tutorial), in English."""
    from sphinx_gallery import py_source_parser as sg
    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF
    from sphinx_gallery.notebook import jupyter_notebook, save_notebook

    script = ROOT / "gallery" / "10_testing_a_custom_function.py"
    blocks = []
    for b in sg.split_code_and_text_blocks(str(script))[1]:
        text = b.content
        if b.type == "code":
            text = sg.remove_config_comments(sg.remove_ignore_blocks(text))
        if text.strip():
            blocks.append(sg.Block(b.type, text.strip("\n"), b.lineno))
    conf = {**DEFAULT_GALLERY_CONF, "first_notebook_cell": None}
    save_notebook(jupyter_notebook(blocks, conf, script.parent), path)


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The folder of the notebooks, executed; the environment the servers share."""
    import nbformat

    home = tmp_path_factory.mktemp("jupyter")
    env = _jupyter_env(home)
    for key, values in SETTINGS.items():
        where = home / "settings" / f"{key}.jupyterlab-settings"
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(json.dumps(values), encoding="utf-8")
    folder = home / "notebooks"
    folder.mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"
    }  # fmt: skip
    nbformat.write(notebook, folder / "untrusted.ipynb")
    # Run elsewhere (its own Jupyter data: nbconvert trusts what it ran), as
    # a notebook made on another machine, shared: untrusted here.
    elsewhere = {**env, "JUPYTER_DATA_DIR": str(home / "elsewhere")}
    _execute(folder / "untrusted.ipynb", elsewhere)
    shared = nbformat.read(folder / "untrusted.ipynb", as_version=4)
    shared.metadata["title"] = "trusted"  # other bytes: trusting it trusts only it
    trusted = folder / "trusted.ipynb"
    nbformat.write(shared, trusted)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "trust", str(trusted)],
        check=True, env=env, capture_output=True, timeout=300,
    )  # fmt: skip
    _tutorial_notebook(folder / "tutorial10.ipynb")
    _execute(folder / "tutorial10.ipynb", elsewhere)
    return folder, env


def _serve(frontend: str, folder: Path, env: dict[str, str]) -> Iterator[Server]:
    token, port = secrets.token_hex(16), _free_port()
    command = [
        sys.executable, "-m", "jupyter", frontend, "--no-browser",
        f"--ServerApp.ip={harness.LOCAL_HOST}", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0", f"--ServerApp.root_dir={folder}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.allow_root=True",  # a container may run the tests as root
        "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip
    if frontend == "notebook":
        command = [c for c in command if not c.startswith("--LabApp.")]
    log = (folder.parent / f"{frontend}.log").open("wb")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    server = Server(f"http://{harness.LOCAL_HOST}:{port}/", token, folder)
    try:
        deadline = time.monotonic() + TIMEOUT / 1000
        while True:  # until the server answers (or has died)
            if process.poll() is not None:
                pytest.fail(f"jupyter {frontend} exited: see {log.name}")
            try:
                status = server.url + f"api/status?token={token}"
                with urllib.request.urlopen(status, timeout=10):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter {frontend} did not answer: see {log.name}")
                time.sleep(0.25)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def lab(notebooks: tuple[Path, dict[str, str]]) -> Iterator[Server]:
    yield from _serve("lab", *notebooks)


@pytest.fixture(scope="module")
def classic(notebooks: tuple[Path, dict[str, str]]) -> Iterator[Server]:
    yield from _serve("notebook", *notebooks)


@pytest.fixture(params=list(FRONTENDS))
def frontend(request: pytest.FixtureRequest) -> tuple[str, Server]:
    name: str = request.param
    return name, request.getfixturevalue("lab" if name == "lab" else "classic")


def _saved(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / name).read_text("utf-8"))
    return data


def _tree(folder: Path) -> str:
    """The text/plain the kernel saved: GraphHtml's repr, format_graph's tree."""
    [output] = _saved(folder, "untrusted.ipynb")["cells"][0]["outputs"]
    return "".join(output["data"]["text/plain"])


def _open(context: BrowserContext, url: str) -> Page:
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.goto(url, wait_until="domcontentloaded")
    return page


def _view(page: Page) -> Frame:
    """The view's frame in the notebook, once its boxes are drawn."""
    frame_element = page.locator(f"{OUTPUT} iframe.autograd-notes-frame")
    frame_element.wait_for(state="visible")
    frame = frame_element.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_selector("#an-canvas g.an-box")
    return frame


# The view's scheme is the one asked (view.js sets it from the page's theme).
SCHEME_JS = "s => document.documentElement.dataset.scheme === s"
LUMINANCE_JS = """() => {
  const [r, g, b] = getComputedStyle(document.body).backgroundColor
    .match(/\\d+/g).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""


def test_the_saved_text_is_format_graphs_tree(
    notebooks: tuple[Path, dict[str, str]],
) -> None:
    from autograd_notes import format_graph

    scope: dict[str, Any] = {}
    exec("\n".join(CELL.splitlines()[:-1]), scope)  # all but to_html(...)
    names = {"w": scope["w"], "b": scope["b"], "loss": scope["loss"]}
    assert _tree(notebooks[0]) == format_graph(scope["loss"], names=names)


def test_an_untrusted_notebook_shows_the_text_tree_and_the_hint(
    frontend: tuple[str, Server], new_context: harness.ContextFactory,
    artifacts: Path,
) -> None:  # fmt: skip
    from autograd_notes._notebook import HINT

    name, server = frontend
    page = _open(
        new_context(color_scheme="light"), server.page_url(name, "untrusted.ipynb")
    )
    fallback = page.locator(f"{OUTPUT} .autograd-notes-fallback")
    fallback.wait_for(state="visible")
    tree = _tree(server.folder)
    assert fallback.locator("pre").inner_text() == tree
    assert fallback.locator("p").inner_text() == HINT
    output = page.locator(OUTPUT).first
    shown = output.inner_text()
    assert re.sub(r"\n+", "\n", shown.strip()) == f"{HINT}\n{tree}"
    assert page.locator(f"{OUTPUT} iframe, {OUTPUT} svg").count() == 0
    for line in tree.splitlines():  # each box's label once, on its own line
        label = re.sub(r"^[\s│├└─]*", "", line)
        assert shown.count(label) == 1, label
    assert not page.locator(f"{OUTPUT} img.autograd-notes-static").is_visible()
    output.screenshot(path=artifacts / f"notebook-untrusted-{name}.png")


def test_a_trusted_notebook_shows_the_view_sized_to_it(
    frontend: tuple[str, Server], new_context: harness.ContextFactory
) -> None:
    name, server = frontend
    context = new_context(color_scheme="light", viewport=TALL)
    framed: list[str] = []
    context.on(
        "request",
        lambda r: framed.append(r.url) if r.frame.parent_frame is not None else None,
    )
    page = _open(context, server.page_url(name, "trusted.ipynb"))
    frame = _view(page)
    tops = frame.evaluate("() => window.anView.tops")
    assert frame.locator("#an-canvas g.an-box").count() == tops > 3
    assert not page.locator(f"{OUTPUT} .autograd-notes-fallback").is_visible()
    assert frame.evaluate(LUMINANCE_JS) > 0.8  # the light theme: a light view
    # the frame grows to the height the view asks for: the bar, the graph at scale 1
    frame.wait_for_function(
        """() => innerHeight >= document.getElementById('an-bar').offsetHeight
                 + document.querySelector('#an-canvas svg g').getBBox().height"""
    )
    element = page.locator(f"{OUTPUT} iframe.autograd-notes-frame")
    assert framed == []  # the view fetched nothing
    if name == "lab":  # printed: the picture instead of the frame
        page.emulate_media(media="print")
        assert page.locator(f"{OUTPUT} img.autograd-notes-static").is_visible()
        assert not element.is_visible()
        page.emulate_media(media="screen")


def test_a_search_pans_to_a_match_out_of_sight(
    lab: Server, new_context: harness.ContextFactory
) -> None:
    page = _open(
        new_context(color_scheme="light"), lab.page_url("lab", "trusted.ipynb")
    )
    frame = _view(page)
    canvas = frame.locator("#an-canvas")
    canvas.focus()
    for _ in range(40):  # pan the graph off to the right, out of sight
        canvas.press("ArrowLeft")
    inside_js = """() => {
      const c = document.getElementById('an-canvas').getBoundingClientRect();
      const hit = document.querySelector('#an-canvas g.an-hit rect');
      const b = hit.getBoundingClientRect();
      return b.left >= c.left && b.right <= c.right
        && b.top >= c.top && b.bottom <= c.bottom;
    }"""
    frame.locator("#an-search").fill("Tanh")
    frame.wait_for_selector("#an-canvas g.an-hit")
    assert frame.evaluate(inside_js)


def test_the_dark_theme_darkens_the_view(
    lab: Server, new_context: harness.ContextFactory, artifacts: Path
) -> None:
    lab.api(
        "PUT", f"lab/api/settings/{THEMES}", {"raw": '{"theme": "JupyterLab Dark"}'}
    )
    try:
        page = _open(
            new_context(color_scheme="light"), lab.page_url("lab", "trusted.ipynb")
        )
        page.wait_for_selector('body[data-jp-theme-light="false"]', state="attached")
        frame = _view(page)
        frame.wait_for_function(SCHEME_JS, arg="dark")
        assert frame.evaluate(LUMINANCE_JS) < 0.2
        page.locator(OUTPUT).first.screenshot(path=artifacts / "notebook-dark-lab.png")
    finally:
        lab.api("PUT", f"lab/api/settings/{THEMES}", {"raw": "{}"})


def test_the_sites_dark_theme_darkens_the_view(
    notebooks: tuple[Path, dict[str, str]], new_context: harness.ContextFactory
) -> None:
    """The site's pages (pydata-sphinx-theme: ``<html data-theme>``), the
    output as sphinx-gallery writes it into a page."""
    [output] = _saved(notebooks[0], "trusted.ipynb")["cells"][0]["outputs"]
    markup = "".join(output["data"]["text/html"])
    page = new_context(color_scheme="light").new_page()
    page.set_default_timeout(TIMEOUT)
    page.set_content(f'<html data-theme="dark"><body>{markup}</body></html>')
    handle = page.locator("iframe.autograd-notes-frame").element_handle()
    frame = handle.content_frame()
    assert frame is not None
    frame.wait_for_function(SCHEME_JS, arg="dark")
    assert frame.evaluate(LUMINANCE_JS) < 0.2
    page.evaluate("() => { document.documentElement.dataset.theme = 'light'; }")
    frame.wait_for_function(SCHEME_JS, arg="light")  # the reader switched theme
    assert frame.evaluate(LUMINANCE_JS) > 0.8


def test_tutorial_10_shows_no_traceback_and_no_path(
    lab: Server, new_context: harness.ContextFactory
) -> None:
    cells = _saved(lab.folder, "tutorial10.ipynb")["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c["outputs"]]
    assert [o for o in outputs if o.get("name") == "stderr"] == []
    assert [o for o in outputs if o["output_type"] == "error"] == []
    page = _open(
        new_context(color_scheme="light"), lab.page_url("lab", "tutorial10.ipynb")
    )
    page.get_by_text("Error detected in ClampedSqrtBackward.").wait_for()
    shown = "\n".join(page.locator(OUTPUT).all_inner_texts())
    assert "Error detected in ClampedSqrtBackward. Traceback of forward call" in shown
    assert 'File "' not in shown
    assert "Traceback (most recent call last)" not in shown
    assert not re.search(r"(/[\w.-]+){3,}\.py", shown), "a path in the outputs"
    assert (
        page.locator('[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
    )
