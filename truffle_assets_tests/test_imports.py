"""The package's import graph: no module imports itself back, whether at the top of a file or inside
a function (a function-level import is a dependency all the same; it only runs later).

The graph is read from the source with `ast`, so it is the same whatever a test session has
already imported. Imports under `if TYPE_CHECKING:` never run and are left out, and so is a
module's edge to its own parent packages (Python imports those first, always).

The chat runtime never imports the pipeline (docs/runtime_contracts.md), and neither does any other
plain logic package: no `dagster*` package and nothing under `truffle_assets.defs`, neither on any
import path the source shows nor (runtime, evals) in a fresh interpreter after importing each module."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import truffle_assets

PACKAGE = Path(truffle_assets.__file__).parent


def module_files() -> dict[str, Path]:
    """Dotted name -> file of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
                                         or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _runtime_nodes(tree: ast.AST):
    """Every node of `tree` except the bodies of `if TYPE_CHECKING:` (their `else` runs)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(node.orelse if _type_checking(node) else ast.iter_child_nodes(node))


def _imported(module: str, path: Path) -> set[str]:
    """Every dotted name `module` imports, at any depth of the file."""
    names: set[str] = set()
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names |= {f"{base}.{a.name}" for a in node.names}  # `from pkg import module`
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (a name resolves to the deepest module it names)."""
    files = module_files()

    def resolve(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in files.items():
        targets = {resolve(n) for n in _imported(module, path) if n.split(".")[0] == PACKAGE.name}
        parents = {".".join(module.split(".")[:n]) for n in range(1, module.count(".") + 1)}
        graph[module] = {t for t in targets if t and t != module and t not in parents}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_imports():
    graph = import_graph()
    assert "truffle_assets.runtime.service" in graph["truffle_assets.evals.qa"]  # inside ask_endpoint
    assert "truffle_assets.evals.questions" in graph["truffle_assets.training.grounded"]


def test_no_module_import_cycle():
    assert cycles(import_graph()) == []


def stage(module: str) -> str:
    """The top-level part of the package a module belongs to: `truffle_assets.training.pack` -> `training`."""
    return (module.split(".") + [""])[1] or module


def test_no_import_cycle_between_stages():
    """Nor between the package's top-level parts (runtime, training, evals, feedback, defs, ...): a
    stage may use another only if that one does not use it back, through any of their modules."""
    stages: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        stages.setdefault(stage(module), set()).update(stage(t) for t in targets if stage(t) != stage(module))
    assert cycles(stages) == []


# ---- what the runtime may load ------------------------------------------------------------------------

PIPELINE = ("dagster", f"{PACKAGE.name}.defs", f"{PACKAGE.name}.definitions")


def _pipeline(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") or name.startswith(p + "_") for p in PIPELINE)


def reachable(graph: dict[str, set[str]], start: set[str]) -> set[str]:
    seen, todo = set(start), list(start)
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


# the Dagster side: the code location, its definitions, and the command line that drives them
PIPELINE_STAGES = {"defs", "definitions", "cli"}


def test_only_the_pipeline_reaches_dagster():
    """Every module outside `defs`, `definitions` and `cli` (the runtime, evals, training, feedback,
    memory, parsing, ingest, retrieval, index, pii, llm, ...) and every module it imports, at any
    depth and inside any function, is outside `defs` and imports no `dagster*` package itself."""
    graph, files = import_graph(), module_files()
    plain = {m for m in graph if stage(m) not in PIPELINE_STAGES}
    assert {"runtime", "evals", "training", "feedback"} <= {stage(m) for m in plain}
    bad = {}
    for m in sorted(reachable(graph, plain)):
        names = _imported(m, files[m])
        if _pipeline(m) or any(_pipeline(n) for n in names):
            bad[m] = sorted(n for n in names if _pipeline(n)) or [m]
    assert bad == {}


def _loaded_after_each(package: str) -> dict[str, list[str]]:
    """Each module of `package` imported one by one in a fresh interpreter; module -> the `dagster*`
    and `truffle_assets.defs*` modules loaded after it."""
    code = f"""
import importlib, json, pkgutil, sys
root = importlib.import_module({package!r})
PIPELINE = {PIPELINE!r}
def pipeline(n):
    return any(n == p or n.startswith(p + ".") or n.startswith(p + "_") for p in PIPELINE)
names = [root.__name__] + [m.name for m in pkgutil.walk_packages(root.__path__, root.__name__ + ".")]
loaded = {{}}
for name in names:
    importlib.import_module(name)
    loaded[name] = sorted(m for m in sys.modules if pipeline(m))
print(json.dumps(loaded))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_any_runtime_module_loads_no_dagster():
    loaded = _loaded_after_each(f"{PACKAGE.name}.runtime")
    assert len(loaded) > 20 and f"{PACKAGE.name}.runtime.forget_api" in loaded
    assert {m: v for m, v in loaded.items() if v} == {}


def test_importing_any_evals_module_loads_no_dagster():
    loaded = _loaded_after_each(f"{PACKAGE.name}.evals")
    assert f"{PACKAGE.name}.evals.qa" in loaded
    assert {m: v for m, v in loaded.items() if v} == {}


def test_neither_the_package_nor_its_tests_import_benchmarks():
    """benchmarks/ holds scripts a person runs; what they share with the product lives in the package,
    so the package and its tests stand without them (a benchmark's own behaviour is tested by running it)."""
    tests = Path(__file__).parent
    files = {f"{PACKAGE.name}.{p.relative_to(PACKAGE).with_suffix('')}".replace("/", "."): p
             for p in PACKAGE.rglob("*.py")}
    files |= {f"{tests.name}.{p.relative_to(tests).with_suffix('')}".replace("/", "."): p for p in tests.rglob("*.py")}
    assert len(files) > 300
    offenders = {m: sorted(n for n in _imported(m, p) if n == "benchmarks" or n.startswith("benchmarks."))
                 for m, p in files.items()}
    assert {m: v for m, v in offenders.items() if v} == {}
