"""The services and the web app stand without the command line: nothing under ``kingdomino/``
but the CLI itself, and nothing under ``webapp/``, imports ``kingdomino.cli`` (at the top or
inside a function), and the services never import the web app. So the CLI, the services and the
web app form no loop (issue 49, item 6)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = "kingdomino.cli"
CLI_FILES = ("kingdomino/cli.py", "kingdomino/__main__.py")   # ``python3 -m kingdomino``
SERVICES = sorted(p for p in (ROOT / "kingdomino").rglob("*.py")
                  if p.relative_to(ROOT).as_posix() not in CLI_FILES)
WEB = sorted((ROOT / "webapp").rglob("*.py"))


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path, root: Path = ROOT) -> set[str]:
    """Every module ``path`` names in an import, relative ones resolved; for ``from P import
    x`` both ``P`` and ``P.x`` (``x`` may be a module)."""
    here = module_name(path, root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                if node.module:
                    base = base + node.module.split(".")
                source = ".".join(base)
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def reaching(paths, banned: str, root: Path = ROOT) -> dict[str, list[str]]:
    """The modules among ``paths`` that import ``banned`` (or a module inside it): what."""
    found = {}
    for path in paths:
        hits = sorted(n for n in imported(path, root) if n == banned or n.startswith(banned + "."))
        if hits:
            found[module_name(path, root)] = hits
    return found


def test_the_scan_sees_imports_of_every_form(tmp_path):
    package = tmp_path / "kingdomino" / "inner"
    package.mkdir(parents=True)
    forms = {"a.py": "import kingdomino.cli\n",
             "b.py": "def f():\n    from kingdomino import cli\n",
             "c.py": "from .. import cli\n",
             "d.py": "from ..cli import main\n",
             "__init__.py": "from ..cli import UsageError\n",
             "e.py": "from kingdomino import clipboard\nimport kingdomino.client\n"}
    for name, text in forms.items():
        (package / name).write_text(text)
    found = reaching(sorted(package.glob("*.py")), CLI, root=tmp_path)
    assert set(found) == {"kingdomino.inner.a", "kingdomino.inner.b", "kingdomino.inner.c",
                          "kingdomino.inner.d", "kingdomino.inner"}


def test_the_scan_reads_the_real_tree():
    assert any(p.name == "table.py" for p in SERVICES) and any(p.name == "routes.py" for p in WEB)
    assert CLI in imported(ROOT / "kingdomino" / "__main__.py")   # the one module that should
    assert "kingdomino.table" in imported(ROOT / "webapp" / "table.py")


def test_the_services_never_import_the_command_line():
    assert reaching(SERVICES, CLI) == {}


def test_the_web_app_never_imports_the_command_line():
    assert reaching(WEB, CLI) == {}


def test_the_services_never_import_the_web_app():
    assert reaching(SERVICES, "webapp") == {}
