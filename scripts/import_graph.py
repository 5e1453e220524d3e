#!/usr/bin/env python3
"""Import graph of a crate's source files (issue 29's measure of circles).

Every path a file names (`use` trees, `crate::a::b`, `super::x`, and paths
starting with a name a `use` brought in) is resolved through the module tree
and through re-exports to the file that *defines* the item; that is an edge.
A `mod.rs` that only declares and re-exports is a facade, not an importer.
`#[cfg(test)] mod tests { ... }` blocks are left out (tests may use anything).

    python3 scripts/import_graph.py                 # circles of h5vec/src files
    python3 scripts/import_graph.py --crate h5vec-derive/src
    python3 scripts/import_graph.py --modules       # top-level modules only
    python3 scripts/import_graph.py --edges raw/rows.rs pipeline/chunks.rs

Exit status 1 when a circle exists.
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ITEM = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|unsafe\s+|const\s+|extern\s+\"C\"\s+)*"
    r"(fn|struct|enum|trait|type|const|static|union|macro_rules!)\s+([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
# `mod name { ... }` in a file: its items count as the file's (a path
# through it, `file_mod::name::item`, resolves to the file).
INLINE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*\{", re.M)
# Items of inline modules are indented.
INNER_ITEM = re.compile(
    r"^\s+(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|unsafe\s+|const\s+|extern\s+\"C\"\s+)*"
    r"(fn|struct|enum|trait|type|const|static|union|macro_rules!)\s+([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
MOD = re.compile(r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)
USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:[A-Za-z_][A-Za-z0-9_]*::)+[A-Za-z_][A-Za-z0-9_]*)")


def strip(text):
    """Code without comments, string and char literals (kept as empty ones)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 8]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append("' '")
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    m = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
    if m:
        text = text[: m.start()]
    return text


def use_tree(tree, prefix=()):
    """Expand `a::{b, c::d as e, f::*}` into (alias, path) pairs."""
    tree = tree.strip()
    if not tree:
        return []
    if tree.startswith("::"):
        tree = tree[2:]
    depth, i = 0, 0
    brace = None
    for i, ch in enumerate(tree):
        if ch == "{" and depth == 0:
            brace = i
            break
    if brace is None:
        m = re.match(r"(.*?)(?:\s+as\s+(\w+))?$", tree, re.S)
        segs = [s.strip() for s in m.group(1).split("::") if s.strip()]
        path = prefix + tuple(segs)
        if segs and segs[-1] == "self":
            path = path[:-1]
        alias = m.group(2) or (path[-1] if path else None)
        return [(alias, path)]
    head = tuple(s.strip() for s in tree[:brace].split("::") if s.strip())
    body = tree[brace + 1 : tree.rindex("}")]
    out, depth, token = [], 0, ""
    for ch in body + ",":
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out += use_tree(token, prefix + head)
            token = ""
        else:
            token += ch
    return out


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path tuple -> file
        self.text = {}
        self.defs = {}  # file -> set of names
        self.uses = {}  # file -> {alias: path tuple (absolute)}
        self.globs = {}  # file -> [module path]
        root = src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs"
        self.load((), root)

    def load(self, modpath, file):
        self.files[modpath] = file
        text = strip(file.read_text())
        self.text[file] = text
        self.defs[file] = {m.group(2) for m in ITEM.finditer(text)}
        self.inline = getattr(self, "inline", {})
        self.inline[file] = {m.group(1) for m in INLINE.finditer(text)}
        if self.inline[file]:
            self.defs[file] |= {m.group(2) for m in INNER_ITEM.finditer(text)}
        children = {}
        for m in MOD.finditer(text):
            name = m.group(1)
            base = file.parent if file.name in ("lib.rs", "main.rs", "mod.rs") else file.with_suffix("")
            for cand in (base / f"{name}.rs", base / name / "mod.rs"):
                if cand.exists():
                    children[name] = cand
                    break
        self.mods_of = getattr(self, "mods_of", {})
        self.mods_of[modpath] = set(children)
        for name, child in children.items():
            self.load(modpath + (name,), child)

    def modpath_of(self, file):
        for k, v in self.files.items():
            if v == file:
                return k
        raise KeyError(file)

    def absolute(self, file, segs):
        """A path as written in `file` -> absolute module path (tuple) or None."""
        here = self.modpath_of(file)
        if not segs:
            return None
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] == "self":
            return here + tuple(segs[1:])
        if segs[0] == "super":
            base = here
            while segs and segs[0] == "super":
                base = base[:-1]
                segs = segs[1:]
            return base + tuple(segs)
        if segs[0] in self.mods_of.get(here, ()):
            return here + tuple(segs)
        alias = self.aliases(file).get(segs[0])
        if alias is not None:
            return alias + tuple(segs[1:])
        return None  # an external crate or a local name

    def aliases(self, file):
        if file not in self.uses:
            self.uses[file] = {}
            self.globs[file] = []
            for m in USE.finditer(self.text[file]):
                for alias, path in use_tree(m.group(1)):
                    if not path:
                        continue
                    ab = self.absolute_raw(file, list(path))
                    if ab is None:
                        continue
                    if path[-1] == "*":
                        self.globs[file].append(ab[:-1])
                    elif alias and alias != "_":
                        self.uses[file][alias] = ab
        return self.uses[file]

    def absolute_raw(self, file, segs):
        here = self.modpath_of(file)
        if segs[0] == "crate":
            return tuple(segs[1:])
        if segs[0] == "self":
            return here + tuple(segs[1:])
        if segs[0] == "super":
            base = here
            while segs and segs[0] == "super":
                base = base[:-1]
                segs = segs[1:]
            return base + tuple(segs)
        if segs[0] in self.mods_of.get(here, ()):
            return here + tuple(segs)
        return None

    def resolve(self, path, seen=None):
        """Absolute path -> defining file, or None."""
        seen = seen or set()
        if path in seen:
            return None
        seen.add(path)
        mod = ()
        for i, seg in enumerate(path):
            if seg in self.mods_of.get(mod, ()):
                mod = mod + (seg,)
                continue
            file = self.files[mod]
            if seg in self.defs[file]:
                return file
            if seg in self.inline.get(file, ()):
                continue  # an inline module: its items are the file's
            alias = self.aliases(file).get(seg)
            if alias is not None:
                return self.resolve(alias + tuple(path[i + 1 :]), seen)
            for g in self.globs.get(file, []):
                hit = self.resolve(g + (seg,) + tuple(path[i + 1 :]), seen)
                if hit:
                    return hit
            return None
        return None  # a module itself: not an edge

    def graph(self):
        edges = {}
        for file, text in self.text.items():
            refs = set()
            body = USE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
            for m in USE.finditer(text):
                public = m.group(0).lstrip().startswith("pub")
                for alias, path in use_tree(m.group(1)):
                    if not path or path[-1] == "*":
                        continue
                    # A re-export is the facade, not a use, unless the
                    # file's own code names it too.
                    if public and not re.search(rf"\b{re.escape(alias or '')}\b", body):
                        continue
                    ab = self.absolute_raw(file, list(path))
                    if ab:
                        refs.add((ab, text.count("\n", 0, m.start(1)) + 1))
            for m in PATH.finditer(body):
                ab = self.absolute(file, m.group(1).split("::"))
                if ab:
                    refs.add((ab, body.count("\n", 0, m.start()) + 1))
            for ab, line in refs:
                dst = self.resolve(ab)
                if dst and dst != file:
                    edges.setdefault(file, {}).setdefault(dst, []).append(line)
        return edges


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--crate", default="h5vec/src")
    ap.add_argument("--modules", action="store_true", help="top-level modules, not files")
    ap.add_argument("--edges", nargs=2, metavar=("FROM", "TO"))
    args = ap.parse_args()
    src = ROOT / args.crate
    crate = Crate(src)
    edges = crate.graph()
    name = lambda f: str(f.relative_to(src))
    if args.modules:
        top = lambda f: name(f).split("/")[0].removesuffix(".rs")
        merged = {}
        for a, ds in edges.items():
            for b, lines in ds.items():
                if top(a) != top(b):
                    merged.setdefault(top(a), {}).setdefault(top(b), []).extend(
                        f"{name(a)}:{l}" for l in lines)
        edges = merged
        nodes = {top(f) for f in crate.text}
    else:
        edges = {name(a): {name(b): [f"{name(a)}:{l}" for l in ls] for b, ls in ds.items()}
                 for a, ds in edges.items()}
        nodes = {name(f) for f in crate.text}
    if args.edges:
        for a in edges:
            if a == args.edges[0] or a.startswith(args.edges[0].rstrip("/") + "/"):
                for b, places in edges[a].items():
                    if b == args.edges[1] or b.startswith(args.edges[1].rstrip("/") + "/"):
                        for p in sorted(places):
                            print(f"{p} -> {b}")
        return 0
    circles = [c for c in sccs(nodes, edges) if len(c) > 1]
    for c in circles:
        print(f"circle of {len(c)}:")
        for a in c:
            inside = sorted(b for b in edges.get(a, {}) if b in c)
            print(f"  {a} -> {', '.join(inside)}")
    if not circles:
        print(f"no circle among {len(nodes)} {'modules' if args.modules else 'files'}")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
