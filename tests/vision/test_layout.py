"""The reader apart from the lab: reading a photo loads no training code, the reader modules
never import the lab, import no cycle, and each stays small enough to read."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READER = sorted((ROOT / "vision").glob("*.py"))
MAX_LINES = 400


def _vision_imports(path: Path) -> set[str]:
    """The vision modules ``path`` imports, at the top or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:          # from . import x / from .x import y
                base = ["vision"] + ([node.module] if node.module else [])
            elif node.module and node.module.split(".")[0] == "vision":
                base = [node.module]
            else:
                continue
            mod = ".".join(base)
            if mod == "vision":
                out.update(f"vision.{a.name}" for a in node.names)
            else:
                out.add(mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "vision")
    return out


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


def test_reader_modules_never_import_the_lab():
    found = {p.name: sorted(m for m in _vision_imports(p)
                            if m == "vision.lab" or m.startswith("vision.lab."))
             for p in READER}
    assert not {k: v for k, v in found.items() if v}


def test_reader_modules_import_no_cycle():
    graph = {f"vision.{p.stem}": {m for m in _vision_imports(p) if m != f"vision.{p.stem}"}
             for p in READER}
    assert graph["vision.tilenet"] <= set(), "the tile network must not reach into the detector"
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
    assert "vision.tilemap" in graph["vision.detect"]   # the scan sees imports at all


def test_no_reader_module_is_over_400_lines():
    long = {p.name: n for p in READER
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these by job: {long}"
