"""`pip install .` (not only -e) must ship the models and data files the tool loads at run time."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    out = tmp_path_factory.mktemp("wheel")
    # built like `pip install .` builds it (isolated): a fresh venv's own setuptools may be too
    # old to make wheels without the `wheel` package
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(out), str(ROOT)],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{proc.stderr[-2000:]}")
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1
    with zipfile.ZipFile(wheels[0]) as zf:
        return set(zf.namelist())


@pytest.mark.slow  # builds the wheel (about 6 s, once for the module)
def test_wheel_ships_every_runtime_file(wheel_names):
    needed = [
        path.relative_to(ROOT).as_posix()
        for pattern in ("models/*.onnx", "models/*.json", "engine/data/*.csv", "vision/*.toml",
                        "vision/lab/data/*.json",  # our Queendomino photo labels
                        # every module of every package and subpackage (kingdomino/batch/...)
                        "engine/**/*.py", "vision/**/*.py", "webapp/**/*.py", "kingdomino/**/*.py",
                        "models/*.py",
                        "webapp/templates/*", "webapp/static/*",
                        # the languages of the pages and the CLI (compiled when first used)
                        "webapp/translations/*.po")
        for path in ROOT.glob(pattern)
    ]
    assert any(n.startswith("models/") and n.endswith(".onnx") for n in needed), \
        "no trained model in models/"
    missing = [n for n in needed if n not in wheel_names]
    assert not missing, f"files the tool loads at run time are missing from the wheel: {missing}"


@pytest.mark.slow  # builds the wheel (about 6 s, once for the module)
def test_wheel_installs_exactly_the_five_top_level_packages(wheel_names):
    """`pip install .` puts these top-level names into site-packages and no other (issue 49,
    item 8: docs/architecture.md, "Installed names"): a new top-level folder would be one more
    name to clash with another project's, so it must be a decision, not an accident."""
    top = {name.split("/")[0] for name in wheel_names}
    packages = {t for t in top if not t.endswith((".dist-info", ".data"))}
    assert packages == {"engine", "vision", "models", "webapp", "kingdomino"}


@pytest.mark.slow  # builds the wheel (about 6 s, once for the module)
def test_wheel_has_console_script_and_no_bytecode(wheel_names):
    entry = [n for n in wheel_names if n.endswith("entry_points.txt")]
    assert entry, "the wheel declares no entry points"
    assert not [n for n in wheel_names if "__pycache__" in n]


def _pyproject() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


# distribution name -> the module it is imported as
IMPORT_NAMES = {"opencv-python-headless": "cv2", "scikit-learn": "sklearn", "scikit-image": "skimage"}


def _dist(requirement: str) -> str:
    import re

    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def test_every_runtime_dependency_is_imported_somewhere():
    sources = "\n".join(p.read_text(encoding="utf-8")
                        for pkg in ("engine", "vision", "webapp", "kingdomino", "models")
                        for p in (ROOT / pkg).rglob("*.py"))
    unused = []
    for req in _pyproject()["project"]["dependencies"]:
        name = IMPORT_NAMES.get(_dist(req), _dist(req).replace("-", "_"))
        if f"import {name}" not in sources and f"from {name}" not in sources:
            unused.append(_dist(req))
    assert not unused, f"declared but never imported: {unused} (drop them from pyproject.toml)"


def test_the_test_extra_needs_no_deep_learning_framework():
    extras = _pyproject()["project"]["optional-dependencies"]
    assert not {_dist(r) for r in extras["test"]} & {"torch", "onnx", "onnxruntime", "tensorflow"}
    assert "torch" in {_dist(r) for r in extras["train"]}
