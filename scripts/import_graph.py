#!/usr/bin/env python3
"""Import graph of h5vec/src at top-level-module granularity.

Every `crate::X` (and `super::`-free `use crate::{X, ...}`) reference in a file
under h5vec/src/X(.rs|/) is an edge X -> Y. Prints the strongly connected
components with more than one module (circles) and, with --edges A B, the
places where A reaches B. Exit status 1 when a circle exists.

    python3 scripts/import_graph.py            # circles
    python3 scripts/import_graph.py --edges raw pipeline
"""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "h5vec" / "src"
# tests and the lock audit are leaves nobody imports.
IGNORE = {"lib", "lock_audit"}


def module_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".rs")


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def references(text: str):
    """Yield (top-level module, line number) for each crate:: path."""
    mods = set()
    for m in re.finditer(r"crate::(\{[^}]*\}|[a-z_][a-z0-9_]*)", text):
        lineno = text.count("\n", 0, m.start()) + 1
        target = m.group(1)
        if target.startswith("{"):
            # use crate::{a::b, c, d::{e}}: top level names at depth 0
            depth = 0
            token = ""
            names = []
            for ch in target[1:-1] + ",":
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                elif ch == "," and depth == 0:
                    names.append(token.strip().split("::")[0])
                    token = ""
                    continue
                if depth == 0 and ch not in "{}":
                    token += ch
            for n in names:
                if n:
                    yield n, lineno
        else:
            yield target, lineno


def graph():
    top = {module_of(p) for p in SRC.rglob("*.rs")}
    edges = {}
    for path in sorted(SRC.rglob("*.rs")):
        src = module_of(path)
        if src in IGNORE:
            continue
        text = strip_comments(path.read_text())
        # #[cfg(test)] modules may use anything.
        cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
        if cut:
            text = text[: cut.start()]
        for dst, line in references(text):
            if dst in top and dst != src and dst not in IGNORE:
                edges.setdefault(src, {}).setdefault(dst, []).append(
                    f"{path.relative_to(SRC)}:{line}")
    return top - IGNORE, edges


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    nodes, edges = graph()
    if len(sys.argv) == 4 and sys.argv[1] == "--edges":
        for place in edges.get(sys.argv[2], {}).get(sys.argv[3], []):
            print(place)
        return 0
    circles = [c for c in sccs(nodes, edges) if len(c) > 1]
    for c in circles:
        print(f"circle of {len(c)}: {' '.join(c)}")
        for a in c:
            inside = sorted(b for b in edges.get(a, {}) if b in c)
            print(f"  {a} -> {' '.join(inside)}")
    if not circles:
        print(f"no circle among {len(nodes)} modules")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
