"""The reader's house: reading a photo loads no training code; the reader's modules (``vision``
and its stage packages) never import the lab, the services or the web app, and import no cycle;
the stage that reads squares never reaches back into the stage that finds the kingdom; no reader
function is longer than one can read at once; the engine knows nothing of images, services or
the web."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READER = sorted(p for p in (ROOT / "vision").rglob("*.py") if "lab" not in p.parts)
ENGINE = sorted((ROOT / "engine").rglob("*.py"))


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _vision_imports(path: Path) -> set[str]:
    """The vision modules ``path`` imports, at the top or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:               # from . import x / from .x import y
                package = _module(path).split(".")
                package = package[:len(package) - node.level + (path.name == "__init__.py")]
                base = package + ([node.module] if node.module else [])
            elif node.module and node.module.split(".")[0] in TOP:
                base = [node.module]
            else:
                continue
            mod = ".".join(base)
            if mod in PACKAGES:
                out.update(f"{mod}.{a.name}" for a in node.names)
            else:
                out.add(mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] in TOP)
    return out


TOP = ("vision", "engine", "webapp", "kingdomino", "models")
PACKAGES = {"vision", "vision.find", "vision.read", "vision.photo", "engine", "webapp", "kingdomino"}


def test_reading_a_photo_loads_no_training_code():
    code = (
        "import json, sys\n"
        "import vision\n"
        "reading = vision.Reader().read(vision.load_image(sys.argv[1]))\n"
        "heavy = ('torch', 'sklearn', 'onnx', 'onnxruntime')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in heavy\n"
        "             or m == 'vision.lab' or m.startswith('vision.lab.'))\n"
        "print(json.dumps({'bad': bad, 'size': reading.size,\n"
        "                  'vision': sys.modules['vision'].__file__}))\n"
    )
    photo = ROOT / "samples" / "kingdom-5x5.jpg"
    proc = subprocess.run([sys.executable, "-c", code, str(photo)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(out["vision"]).parent == ROOT / "vision"   # this checkout's reader was run
    assert out["size"] == 5
    assert out["bad"] == [], f"reading a photo imported {out['bad']}"


def _imports_of(paths, banned) -> dict:
    found = {_module(p): sorted(m for m in _vision_imports(p) if m.startswith(banned)) for p in paths}
    return {k: v for k, v in found.items() if v}


def test_reader_modules_never_import_the_lab_the_services_or_the_web():
    assert "vision.find.tilemap" in _vision_imports(ROOT / "vision/find/detect.py")  # the scan works
    assert not _imports_of(READER, ("vision.lab", "webapp", "kingdomino"))


def test_reading_squares_never_reaches_back_into_the_search():
    assert not _imports_of([p for p in READER if "read" in p.relative_to(ROOT).parts], ("vision.find",))


MAX_FUNCTION_LINES = 80


def test_no_reader_function_is_over_80_lines():
    """A reader function (``vision`` and its stage packages, not the lab) that grows past
    ``MAX_FUNCTION_LINES``, its docstring and comments included, is split by job into named
    helpers."""
    long = {}
    for path in READER:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{_module(path)}.{node.name}"] = lines
    assert any(p.name == "reader.py" for p in READER)      # the scan sees the reader
    assert not long, f"reader functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_engine_imports_no_reader_service_or_web():
    assert ENGINE and not _imports_of(ENGINE, ("vision", "webapp", "kingdomino", "models"))


def test_reader_modules_import_no_cycle():
    graph = {_module(p): {m for m in _vision_imports(p) if m != _module(p)} for p in READER}
    assert graph["vision.find.tilenet"] <= set(), "the tile network must not reach into the detector"
    state: dict = {}

    def visit(node, path):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", " -> ".join(path + [node])
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, path + [node])
        state[node] = "done"

    for node in graph:
        visit(node, [])
    assert "vision.find.tilemap" in graph["vision.find.detect"]   # the scan sees imports at all
