"""The hosting configurations build the site the way noxfile.py does.

Read the Docs (.readthedocs.yaml) and GitHub Pages (.github/workflows/docs.yml)
must run the ``docs`` nox session with the Python version that noxfile.py's
sessions use (its ``PYTHON`` constant), install the nox that .ci/run pins, and
publish the folder the session builds into.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOXFILE = ROOT / "noxfile.py"
READTHEDOCS = ROOT / ".readthedocs.yaml"
WORKFLOW = ROOT / ".github" / "workflows" / "docs.yml"
HOSTING = [READTHEDOCS, WORKFLOW]

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML comes with the docs stack
    yaml = None


def noxfile_constant(name: str) -> Any:
    """The literal value of a module-level constant of noxfile.py."""
    tree = ast.parse(NOXFILE.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                assert node.value is not None
                return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py defines no {name}")


def nox_sessions() -> dict[str, ast.FunctionDef]:
    """The functions of noxfile.py decorated with ``@nox.session``, by name."""
    tree = ast.parse(NOXFILE.read_text(encoding="utf-8"))
    sessions = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            func = call.func if call else decorator
            if ast.unparse(func) == "nox.session":
                name = node.name
                for keyword in call.keywords if call else []:
                    if keyword.arg == "name":
                        name = ast.literal_eval(keyword.value)
                sessions[name] = node
    return sessions


def load(path: Path) -> dict[Any, Any]:
    if yaml is None:
        pytest.skip("PyYAML is not installed: only the text checks ran")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name} is not a YAML mapping"
    return data


def commands(node: Any) -> list[str]:
    """Every string in a YAML tree (the shell commands among them)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [c for value in node.values() for c in commands(value)]
    if isinstance(node, list):
        return [c for item in node for c in commands(item)]
    return []


def uses_action(step: dict[str, Any], action: str) -> bool:
    return bool(step.get("uses", "").partition("@")[0] == action)


def test_noxfile_has_the_docs_session():
    python = noxfile_constant("PYTHON")
    assert re.fullmatch(r"3\.\d+", python), python
    docs = nox_sessions().get("docs")
    assert docs is not None, "noxfile.py has no docs session"
    decorator = ast.unparse(docs.decorator_list[0])
    assert "python=PYTHON" in decorator, decorator


@pytest.mark.parametrize("path", HOSTING, ids=lambda p: p.name)
def test_hosting_runs_the_docs_session(path: Path):
    text = path.read_text(encoding="utf-8")
    python = noxfile_constant("PYTHON")
    output = noxfile_constant("SPHINX_ARGS")[-1]
    assert re.search(r"\bnox -s docs\b", text), f"{path.name} does not run nox -s docs"
    assert re.search(r"pip install\b.*\bnox\b", text), f"{path.name} installs no nox"
    assert re.search(
        rf"""\bpython(-version)?:\s*["']?{re.escape(python)}["']?\s*$""", text, re.M
    ), f"{path.name} does not use Python {python}"
    assert output in text, f"{path.name} does not publish {output}"


@pytest.mark.parametrize("path", HOSTING, ids=lambda p: p.name)
def test_hosting_installs_the_nox_of_ci(path: Path):
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    pin = re.search(r"nox==[\w.]+", ci)
    if pin is None:
        pytest.skip(".ci/run pins no nox version")
    assert pin.group(0) in path.read_text(encoding="utf-8"), (
        f"{path.name} must install {pin.group(0)}, as .ci/run does"
    )


def test_readthedocs_config():
    config = load(READTHEDOCS)
    python = noxfile_constant("PYTHON")
    output = noxfile_constant("SPHINX_ARGS")[-1]
    assert config["version"] == 2
    build = config["build"]
    assert build["os"] == "ubuntu-24.04"
    assert str(build["tools"]["python"]) == python
    steps = commands(build.get("commands", [])) + commands(build.get("jobs", {}))
    assert any(re.search(r"pip install\b.*\bnox\b", s) for s in steps), steps
    assert any(re.search(r"\bnox -s docs$", s) for s in steps), steps
    copy = [s for s in steps if output in s and "$READTHEDOCS_OUTPUT/html" in s]
    assert copy, f"nothing copies {output} to $READTHEDOCS_OUTPUT/html: {steps}"
    assert steps.index(copy[-1]) > max(
        i for i, s in enumerate(steps) if "nox -s docs" in s
    ), "the site is copied before it is built"


def test_github_pages_workflow():
    workflow = load(WORKFLOW)
    python = noxfile_constant("PYTHON")
    output = noxfile_constant("SPHINX_ARGS")[-1]
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads on: as True
    assert "push" in triggers
    assert "pull_request" in triggers
    jobs = workflow["jobs"]
    steps = [step for job in jobs.values() for step in job.get("steps", [])]
    uses = {step.get("uses", "").partition("@")[0]: step for step in steps}
    setup = uses.get("actions/setup-python")
    assert setup is not None, "no actions/setup-python step"
    assert str(setup["with"]["python-version"]) == python
    runs = [step["run"] for step in steps if "run" in step]
    assert any(re.search(r"pip install\b.*\bnox\b", r) for r in runs), runs
    assert any(re.search(r"\bnox -s docs\b", r) for r in runs), runs
    upload = uses.get("actions/upload-pages-artifact")
    assert upload is not None, "the site is not uploaded as a Pages artifact"
    assert upload["with"]["path"].rstrip("/") == output
    deploy = [
        job
        for job in jobs.values()
        if any(uses_action(s, "actions/deploy-pages") for s in job["steps"])
    ]
    assert len(deploy) == 1, "exactly one job deploys to GitHub Pages"
    assert "refs/heads/main" in deploy[0].get("if", ""), "deploys from main only"
    assert deploy[0]["permissions"] == {"pages": "write", "id-token": "write"}


def test_both_editions_are_published():
    """GitHub Pages publishes the folder that holds both editions; each Read the
    Docs project (English, and its zh_CN translation) publishes its own."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build", ROOT / "docs" / "build.py")
    assert spec is not None
    assert spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    output = ROOT / noxfile_constant("SPHINX_ARGS")[-1]
    assert build.EDITIONS["en"] == output
    assert build.EDITIONS["zh_CN"].parent == output, "zh_CN must be inside the site"
    steps = commands(load(READTHEDOCS)["build"]["commands"])
    script = next(s for s in steps if "READTHEDOCS_LANGUAGE" in s)
    assert "zh_CN" in script
    assert "docs/_build/html/zh_CN/." in script
    assert 'rm -rf "$READTHEDOCS_OUTPUT/html/zh_CN"' in script
