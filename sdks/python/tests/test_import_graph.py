"""No module of the atrium package imports, even only for type checking, one that imports it."""

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "atrium"


def module_name(path: Path) -> str:
    parts = ["atrium", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: Set[str]) -> Set[str]:
    """The package's modules that ``path`` imports, relative or absolute, at any depth."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {target for target in found if target in modules and target != name}


def graph() -> Dict[str, Set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): imports(path, modules) for path in paths}


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    found: List[List[str]] = []
    state: Dict[str, str] = {}

    def visit(node: str, path: List[str]) -> None:
        state[node] = "open"
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return found


def test_the_graph_sees_the_imports() -> None:
    edges = graph()
    assert "atrium.auth" in edges["atrium.gateway"]
    assert "atrium._gateway_calls" in edges["atrium.gateway_async"]


def test_no_import_cycle_within_the_package() -> None:
    # A package's __init__ importing its own modules is how packages are built, not a circle.
    edges = {
        name: {t for t in targets if not name.startswith(f"{t}.") and t != "atrium"}
        for name, targets in graph().items()
    }
    assert cycles(edges) == []
