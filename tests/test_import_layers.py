"""The modules of jitgrad.ops, jitgrad.autograd and jitgrad.nn form layers: their
module-level imports have no cycle, and each module imports on its own, before its
package's ``__init__`` has bound anything (a function-local import is how a module reaches
a higher layer, and each says why).
"""

import ast
import subprocess
import sys
from pathlib import Path

import jitgrad

ROOT = Path(jitgrad.__file__).parent
PACKAGES = ("ops", "autograd", "nn")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# Every module of jitgrad: a cycle among the layered packages may pass through another one
# (jitgrad.creation, jitgrad.tensor, ...).
MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
LAYERED = sorted(
    name
    for name, path in MODULES.items()
    if name.split(".")[1:2] in ([p] for p in PACKAGES) and path.name != "__init__.py"
)


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(name: str, in_functions: bool) -> list[tuple[str, ast.stmt]]:
    """The jitgrad modules ``name`` imports, with the import statement: at module level
    (what importing ``name`` runs: class bodies included, ``if TYPE_CHECKING:`` blocks
    not) or, with ``in_functions``, inside function bodies. ``from . import x`` is module
    ``x``; ``from . import f`` is the package's ``__init__``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node, in_function: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, True)
                continue
            if _is_type_checking(child):
                continue
            if in_function == in_functions and isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join(anchor + ([child.module] if child.module else []))
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    found.append((sub if sub in MODULES else base, child))
            elif in_function == in_functions and isinstance(child, ast.Import):
                found.extend((alias.name, child) for alias in child.names)
            visit(child, in_function)

    visit(ast.parse(path.read_text(), str(path)), False)
    return [(module, statement) for module, statement in found if module in MODULES]


def _module_level_graph(with_packages: bool) -> dict:
    """Module -> the modules its module-level imports name; a package's ``__init__`` is
    left out of the layering unless ``with_packages``. ``tensor_math`` builds its namespace
    at import from the primitives' op classes, which it imports by name: those edges are
    added."""
    from jitgrad.ops.primitives import PRIMITIVES

    graph = {
        name: {
            m
            for m, _ in _imports(name, in_functions=False)
            if with_packages or MODULES[m].name != "__init__.py"
        }
        for name in MODULES
    }
    owners = {f"jitgrad.ops.{p.owner.partition('.')[0]}" for p in PRIMITIVES.values()}
    graph["jitgrad.ops.tensor_math"] |= owners
    return graph


def _cycle_through(start: str, graph: dict) -> list[str] | None:
    """A path of imports from ``start`` back to itself, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph[node]):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def test_layered_packages_have_modules_to_check():
    # Guards the discovery below: an empty or partial list would pass vacuously.
    for package in PACKAGES:
        assert any(m.startswith(f"jitgrad.{package}.") for m in LAYERED), package
    assert "jitgrad.ops.movement" in LAYERED and "jitgrad.autograd.function" in LAYERED


def test_module_level_imports_have_no_cycle():
    graph = _module_level_graph(with_packages=False)
    assert "jitgrad.ops.reduce_data" in graph["jitgrad.ops.movement"]  # the parse finds edges
    cycles = [c for c in (_cycle_through(m, graph) for m in LAYERED) if c is not None]
    assert not cycles, "module-level import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _reaches(start: str, targets: set, graph: dict) -> bool:
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node in targets:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(graph[node])
    return False


def test_function_local_imports_are_needed_and_say_why():
    """An import inside a function is there because a module-level one would close a
    cycle, or would reach a layer above the package (a module that imports the package);
    its line says which."""
    graph = _module_level_graph(with_packages=True)
    unneeded, unexplained = [], []
    for name in LAYERED:
        own = {m for m in LAYERED if m.rpartition(".")[0] == name.rpartition(".")[0]}
        source = MODULES[name].read_text().splitlines()
        for module, statement in _imports(name, in_functions=True):
            where = f"{name}:{statement.lineno} imports {module}"
            # (importing a module runs its packages' __init__ first: jitgrad.jit's for
            # jitgrad.jit.vmath.special)
            packages = [".".join(module.split(".")[:k]) for k in range(2, module.count(".") + 1)]
            above = module not in own and any(
                _reaches(m, own, graph) for m in (module, *packages) if m in MODULES
            )
            if not above and _cycle_through(name, {**graph, name: graph[name] | {module}}) is None:
                unneeded.append(where)
            if "#" not in source[statement.lineno - 1]:
                unexplained.append(where)
    assert not unneeded, "function-local imports that could be module-level:\n" + "\n".join(
        unneeded
    )
    assert not unexplained, "function-local imports without a comment saying why:\n" + (
        "\n".join(unexplained)
    )


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle_through("a", graph) == ["a", "b", "c", "a"]
    assert _cycle_through("d", graph) is None


# One process for every module: each is imported afresh after dropping every module the
# earlier ones loaded, with the packages' __init__ replaced by empty namespaces.
_IMPORT_EACH = """
import importlib, sys, types
root, names = sys.argv[1], sys.argv[2:]

def stub(name, path):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module

stub("jitgrad", root)
importlib.import_module("jitgrad._numba_startup")
importlib.import_module("jitgrad.tensor")  # the data layer, under all three packages
base = set(sys.modules)
layered = [m for m in base if m.startswith(("jitgrad.ops", "jitgrad.autograd", "jitgrad.nn"))]
failed = [f"the data layer imports {layered}"] if layered else []
for name in names:
    for loaded in set(sys.modules) - base:
        del sys.modules[loaded]
    for package in ("ops", "autograd", "nn"):
        stub("jitgrad." + package, root + "/" + package)
    try:
        importlib.import_module(name)
    except Exception as e:
        failed.append(f"{name}: {type(e).__name__}: {e}")
    if name not in sys.modules:
        failed.append(f"{name} was not imported")
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_each_module_imports_on_its_own():
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, str(ROOT), *LAYERED],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
