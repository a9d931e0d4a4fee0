"""The shape of the package: function sizes, McCabe complexity, imports.

Prints the ten longest functions (code lines: lines holding a token other than a
comment, docstrings left out) and the ten most complex (McCabe, as ruff's C901
counts it), the import cycles between planner's modules and every import of
another module's private name. The last line says whether the limits hold:
at most 80 code lines and complexity 15 a function, no cycle, no private import.

    python benchmarks/code_shape.py            # report; exit 1 if a limit fails
    python benchmarks/code_shape.py --top 20
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import mccabe

ROOT = Path(__file__).resolve().parent.parent / "planner"
MAX_LINES = 80
MAX_COMPLEXITY = 15


@dataclass(frozen=True)
class Function:
    where: str
    name: str
    lines: int
    complexity: int


def _code_lines(src: str, tree: ast.Module) -> set[int]:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    code: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type not in skip:
            code.update(range(tok.start[0], tok.end[0] + 1))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                code.difference_update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return code


def functions(path: Path) -> list[Function]:
    """Every function and method of one file, with its code lines and complexity."""
    src = path.read_text(encoding="utf-8")
    tree = ast.parse(src)
    code = _code_lines(src, tree)
    visitor = mccabe.PathGraphingAstVisitor()
    visitor.preorder(tree, visitor)
    complexity = {graph.lineno: graph.complexity() for graph in visitor.graphs.values()}
    rel = path.relative_to(ROOT.parent)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            out.append(Function(f"{rel}:{node.lineno}", node.name, sum(1 for k in span if k in code),
                                complexity.get(node.lineno, 1)))
    return out


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(paths: list[Path]) -> tuple[dict[str, set[str]], list[str]]:
    """Module import graph (inside planner) and the imports of private names."""
    modules = {_module_name(p): p for p in paths}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private = []
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _resolve(mod, path.name == "__init__.py", node)
            if not target.startswith("planner"):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                dest = sub if sub in modules else target
                if dest in modules and dest != mod:
                    graph[mod].add(dest)
                top = target.split(".")
                if alias.name.startswith("_") and not alias.name.startswith("__") and sub not in modules \
                        and top[:2] != mod.split(".")[:2]:
                    private.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {target}.{alias.name}")
    return graph, private


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _parent_package_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # a package's __init__ re-exporting its submodules is not a cycle with them
    return {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=10, help="how many functions to list (default 10)")
    args = ap.parse_args(argv)
    paths = sorted(ROOT.rglob("*.py"))
    funcs = [f for p in paths for f in functions(p)]
    print(f"longest functions (code lines; limit {MAX_LINES}):")
    for f in sorted(funcs, key=lambda f: (-f.lines, f.where))[: args.top]:
        print(f"  {f.lines:5d}  {f.where} {f.name}")
    print(f"most complex functions (McCabe; limit {MAX_COMPLEXITY}):")
    for f in sorted(funcs, key=lambda f: (-f.complexity, f.where))[: args.top]:
        print(f"  {f.complexity:5d}  {f.where} {f.name}")
    graph, private = imports(paths)
    found = cycles(_parent_package_edges(graph))
    print(f"import cycles: {len(found)}")
    for c in found:
        print("  " + " <-> ".join(c))
    print(f"imports of another module's private names: {len(private)}")
    for p in private:
        print("  " + p)
    long = sum(f.lines > MAX_LINES for f in funcs)
    tangled = sum(f.complexity > MAX_COMPLEXITY for f in funcs)
    ok = not (long or tangled or found or private)
    print(f"{len(funcs)} functions: {long} over {MAX_LINES} lines, {tangled} over complexity "
          f"{MAX_COMPLEXITY}; {len(found)} cycles; {len(private)} private imports: "
          f"{'limits hold' if ok else 'limits fail'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
