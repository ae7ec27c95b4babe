"""The package's shape: no import cycles, imports only in the allowed direction, modules a reader can hold.

The pipeline is language -> frontend -> codegen -> binary -> runtime; host-side
layers (host, testing, compat, sweep, the CLI) sit on top.  The runtime never sees the
frontend, binaries never see the frontend or the runtime, and the instruction
library sees neither.  docs/internals.md draws the same map.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "npuemu"

# group -> groups it must not import (at module level or inside a function)
FORBIDDEN = {
    "language": {"frontend", "codegen", "binary", "runtime", "isa", "numerics", "jit", "host", "testing", "compat",
                 "sweep", "cost", "superkernel"},
    "numerics": {"frontend", "codegen", "binary", "runtime", "jit", "host", "testing", "compat", "sweep", "cost",
                 "superkernel"},
    "isa": {"frontend", "codegen", "binary", "runtime", "jit", "host", "testing", "compat", "sweep", "cost",
            "superkernel"},
    "codegen": {"frontend", "binary", "runtime", "jit", "host", "testing", "compat", "sweep", "cost",
                "superkernel"},
    "binary": {"frontend", "runtime", "jit", "host", "testing", "compat", "sweep", "cost", "superkernel"},
    "frontend": {"runtime", "jit", "host", "testing", "compat", "sweep", "cost", "superkernel"},
    "runtime": {"frontend", "jit", "host", "testing", "compat", "sweep", "cost", "superkernel"},
    # sweeps consume binaries (by key, from the store) and never reach into the frontend or the code generator
    "sweep": {"frontend", "codegen", "jit"},
    "cost": {"frontend", "codegen", "jit", "host", "testing", "compat", "sweep", "superkernel"},
    # SuperKernels consume binaries (built, or recorded from launches through the runtime's recording hook)
    # beside ops/: never the frontend, the jit layer or the op layer itself; the runtime never imports them
    "superkernel": {"frontend", "jit", "host", "testing", "compat", "sweep", "ops"},
}
MAX_LINES = 600
# modules over MAX_LINES that hold one concept, with the reason
ONE_CONCEPT: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _imports(name: str, path: Path, modules: dict[str, Path], top_level_only: bool) -> set[str]:
    """The npuemu modules ``name`` imports (``from . import x`` names module x)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:      # statements guarded by ``if TYPE_CHECKING:`` never run
        nodes = [n for n in nodes if not (isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))]
        nodes = [sub for n in nodes for sub in ([n] if not isinstance(n, (ast.Try, ast.If)) else ast.walk(n))]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("npuemu"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("npuemu"):
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            found.update(subs or [target])
    return {m for m in found if m in modules}


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_import_cycles():
    modules = _modules()
    graph = {m: _imports(m, p, modules, top_level_only=True) - {m} for m, p in modules.items()}
    done: set[str] = set()

    def visit(m: str, stack: list[str]) -> None:
        if m in stack:
            cycle = stack[stack.index(m):] + [m]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if m in done:
            return
        stack.append(m)
        for n in sorted(graph[m]):
            # a package importing its own submodules is how packages are built, not a cycle
            if not n.startswith(m + "."):
                visit(n, stack)
        stack.pop()
        done.add(m)

    for m in sorted(graph):
        visit(m, [])


def test_imports_go_one_way():
    modules = _modules()
    wrong = []
    for m, p in sorted(modules.items()):
        banned = FORBIDDEN.get(_group(m), set())
        for target in sorted(_imports(m, p, modules, top_level_only=False)):
            if _group(target) in banned:
                wrong.append(f"{m} imports {target}")
    assert not wrong, "imports against the pipeline's direction:\n" + "\n".join(wrong)


def test_modules_are_small_enough_to_read():
    long = {m: len(p.read_text().splitlines()) for m, p in _modules().items()}
    over = {m: n for m, n in long.items() if n > MAX_LINES and m not in ONE_CONCEPT}
    assert not over, f"modules over {MAX_LINES} lines (split them, or list them in ONE_CONCEPT with why): {over}"
    stale = [m for m in ONE_CONCEPT if long.get(m, 0) <= MAX_LINES]
    assert not stale, f"listed as long but no longer are: {stale}"


def test_every_package_is_in_the_wheel():
    """pyproject.toml lists the packages explicitly (kernels/ and tiling/ are mapped into npuemu): a
    subpackage left off works in an editable install and is missing from a built wheel."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py")}
    assert not found - listed, f"packages missing from pyproject.toml [tool.setuptools] packages: {found - listed}"


def test_the_cost_model_words_come_after_every_core_state_slot():
    """isa/state.py ends with the cost model's words, past STATE_SIZE; a slot added after them would share
    words with the cost model in profiled launches."""
    from npuemu.isa import state as S
    assert S.COST_ISSUE == S.STATE_SIZE, "per-core state slots were added after the cost block of isa/state.py"
