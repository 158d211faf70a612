"""The README and the docs name only what the code has (issue 49, item 5).

Every dotted name in backticks that starts with one of the project's packages (``vision.``,
``engine.``, ``kingdomino.``, ``webapp.``, ``models.``) must import (the longest importable module,
then ``getattr`` for the rest), every file path in backticks must exist, every ``[section] key``
must be a setting of ``vision/config.toml``, and every link into a doc (``file.md#anchor``) must
land on a heading. ``docs/history.md`` is a log: its entries name the code of their day, so its
names are not checked (its links are).
"""
from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("vision", "engine", "kingdomino", "webapp", "models")
LOG = "docs/history.md"

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_SPAN = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"(?<![\w./-])((?:%s)(?:\.[A-Za-z_]\w*)+)" % "|".join(PACKAGES))
_PATH = re.compile(r"(?<![\w./-])((?:%s|tests|benchmarks|samples|docs)/[\w./*<>-]*)"
                   % "|".join(PACKAGES))
_SETTING = re.compile(r"^\[(\w+)\](?: (\w+))?")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# a dotted name ending so is a file's name (`kingdomino.sqlite3`), not a module's
_FILE_SUFFIXES = {"sqlite3", "json", "jsonl", "csv", "toml", "onnx", "py", "md", "po", "pot", "js",
                  "html", "txt", "jpg", "png", "zip"}
# paths outside the checkout that the docs name (the store in the user's data folder)
NOT_IN_REPO = {"kingdomino/kingdomino.sqlite3"}


def _docs() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def _checked(path: Path) -> bool:
    return path.relative_to(ROOT).as_posix() != LOG


def _spans(text: str) -> tuple[list[str], list[str]]:
    """The doc's inline code spans, and its fenced code blocks (each one string)."""
    blocks = _FENCE.findall(text)
    return _SPAN.findall(_FENCE.sub("", text)), blocks


def dotted_names(text: str) -> set[str]:
    spans, blocks = _spans(text)
    names = {m.rstrip(".") for s in spans + blocks for m in _DOTTED.findall(s)}
    return {n for n in names if n.rsplit(".", 1)[-1] not in _FILE_SUFFIXES}


def paths(text: str) -> set[str]:
    spans, _ = _spans(text)
    found = {m.rstrip(".,:;") for s in spans for m in _PATH.findall(s.split("::")[0])}
    return found - NOT_IN_REPO


def settings(text: str) -> set[tuple[str, str | None]]:
    spans, _ = _spans(text)
    return {(m.group(1), m.group(2)) for s in spans for m in [_SETTING.match(s)] if m}


def _defined_in(tree: ast.AST, name: str) -> ast.AST | None:
    """The top-level statement of ``tree`` (a module or class body) that defines ``name``."""
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name == name:
            return node
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                return node
    return None


def _source_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def resolves(name: str) -> bool:
    """Whether ``name`` is a module of the project, or an attribute reached from one.

    Imported where it can be; a module that needs what this environment lacks (torch for the
    lab's training) is read instead: its file must exist and define the rest of the name."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        try:
            obj = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.split(".")[0] in PACKAGES:
                continue          # not a module: a shorter prefix is, and the rest attributes
            source = _source_file(module)   # a third-party module is missing: read the file
            if source is None:
                return False
            tree: ast.AST | None = ast.parse(source.read_text(encoding="utf-8"))
            for attr in parts[i:]:
                tree = _defined_in(tree, attr)
                if tree is None:
                    return False
            return True
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def path_exists(path: str) -> bool:
    pattern = re.sub(r"<[^>]*>", "*", path)
    pattern = "/".join("*" if re.fullmatch(r"[A-Z]+", p) else
                       re.sub(r"^[A-Z]+(\.\w+)$", r"*\1", p) for p in pattern.split("/"))
    if "*" in pattern:
        return any(ROOT.glob(pattern))
    return (ROOT / pattern).exists()


def slugs(text: str) -> set[str]:
    """GitHub's anchors for the headings of a markdown text (a repeated one gets -1, -2...)."""
    seen: dict[str, int] = {}
    out = set()
    for line in _FENCE.sub("", text).splitlines():
        m = re.match(r"^#{1,6} +(.*?) *#*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower().replace("`", ""))
        slug = slug.replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _where(doc: Path) -> str:
    return doc.relative_to(ROOT).as_posix()


def test_the_checks_see_what_they_look_for():
    text = ("`kingdomino.sqlite3`, `kingdomino/kingdomino.sqlite3`, `vision.find.frame.best_window` and `python3 -m vision.lab.evaluation.robust --x`, "
            "`vision/find/detect.py`, `models/*.onnx`, `[frame] trim_like_table`, `[io]`\n"
            "```python\nimport vision\nvision.Reader()\n```\n")
    assert dotted_names(text) == {"vision.find.frame.best_window",
                                  "vision.lab.evaluation.robust", "vision.Reader"}
    assert paths(text) == {"vision/find/detect.py", "models/*.onnx"}
    assert settings(text) == {("frame", "trim_like_table"), ("io", None)}
    assert resolves("vision.find.frame.best_window") and resolves("engine.kingdom.SIZES")
    assert resolves("vision.lab.training.squares.TABLE_RING")     # read, if torch is absent
    assert not resolves("vision.synth") and not resolves("vision.find.frame.ring_corners")
    assert path_exists("webapp/translations/<locale>.po") and path_exists("models/*.onnx")
    assert not path_exists("vision/trim.py")
    assert "how-well-it-reads-honest-figures" in slugs("## How well it reads (honest figures)")


@pytest.mark.parametrize("doc", [d for d in _docs() if _checked(d)], ids=_where)
def test_every_name_in_backticks_is_in_the_code(doc):
    missing = sorted(n for n in dotted_names(doc.read_text(encoding="utf-8")) if not resolves(n))
    assert not missing, f"{_where(doc)} names what the code lacks: {missing}"


@pytest.mark.parametrize("doc", [d for d in _docs() if _checked(d)], ids=_where)
def test_every_path_in_backticks_exists(doc):
    missing = sorted(p for p in paths(doc.read_text(encoding="utf-8")) if not path_exists(p))
    assert not missing, f"{_where(doc)} names files that do not exist: {missing}"


@pytest.mark.parametrize("doc", [d for d in _docs() if _checked(d)], ids=_where)
def test_every_setting_in_backticks_is_in_the_config(doc):
    config = tomllib.loads((ROOT / "vision" / "config.toml").read_text(encoding="utf-8"))
    missing = sorted(f"[{s}] {k}" if k else f"[{s}]"
                     for s, k in settings(doc.read_text(encoding="utf-8"))
                     if s not in config or k is not None and k not in config[s])
    assert not missing, f"{_where(doc)} names settings vision/config.toml lacks: {missing}"


@pytest.mark.parametrize("doc", _docs(), ids=_where)
def test_every_link_into_a_doc_lands(doc):
    broken = []
    for target in _LINK.findall(_FENCE.sub("", doc.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):
            continue                      # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in slugs(dest.read_text(
                encoding="utf-8")):
            broken.append(target)
    assert not broken, f"{_where(doc)} links to what is not there: {broken}"


def _modules() -> list[str]:
    """Every module of the five packages, by its import name."""
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def test_the_module_map_lists_every_module():
    """docs/architecture.md's map has a row for every module (its names are checked above)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([\w.]+)` \|", text, re.M))
    missing = [m for m in _modules() if m not in listed]
    assert not missing, (f"docs/architecture.md's module map lacks {missing}: add a row for each "
                         "(module, its job in one line, who imports it)")
