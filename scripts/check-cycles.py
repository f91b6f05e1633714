#!/usr/bin/env python3
"""Finds `use` cycles between the modules of each crate of the workspace.

A module is a source file (`src/a/b.rs` or `src/a/b/mod.rs` is `a::b`). It depends on
another module of its crate when its code (tests aside) names a path into it:
`crate::x::y`, `super::x`, `self::x` (in a `use` or inline). A path is resolved to the
longest module it names (`crate::rules::catalog::RULES` is `rules::catalog`; an item
of `rules/mod.rs`, `crate::rules::pattern_matches`, is `rules`). A parent declaring its
children (`mod x;`) is not a dependency; a parent re-exporting a child's item is one.

Prints each cycle (a strongly connected component of more than one module) and exits 1
when there is one; exits 0 otherwise. Usage: scripts/check-cycles.py [CRATE_SRC...]
(default: every `src/` of the workspace).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^{}]*)\}")


def module_of(src, path):
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def code_of(text):
    """The text without comments and without `#[cfg(test)]` modules (tests may
    reach anywhere)."""
    text = re.sub(r"//[^\n]*", "", text)
    cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    return text[: cut.start()] if cut else text


def targets(module, is_dir_module, text, modules):
    """The modules `module`'s text names."""
    found = set()
    aliases = {}
    paths = []
    for m in GROUP.finditer(text):
        head, prefix = m.group(1), m.group(2)
        for item in m.group(3).split(","):
            item = item.strip().split(" as ")[0].strip()
            if item and item != "self":
                paths.append((head, prefix + "::" + item))
            elif item == "self":
                paths.append((head, prefix))
    for m in PATH.finditer(GROUP.sub("", text)):
        paths.append((m.group(1), m.group(2)))
    for head, rest in paths:
        names = [p for p in rest.split("::") if p]
        if head == "crate":
            base = ()
        else:
            # `self` in a file module is the module itself; `super` its parent. In a
            # `mod.rs`, `self` is the folder's module too.
            base = module if head == "self" else module[:-1]
        while names and names[0] == "super":
            base, names = base[:-1], names[1:]
        full = base + tuple(names)
        resolved = longest(full, modules)
        if resolved != module:
            found.add(resolved)
        if resolved == full and full:
            # A module brought in by name (`use crate::rules::{self}`, `use super::x`):
            # paths through its name (`rules::manifest::check`) reach into it.
            aliases[full[-1]] = full
    for alias, target in aliases.items():
        for m in re.finditer(r"(?<![:\w])" + alias + r"((?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
            resolved = longest(target + tuple(p for p in m.group(1).split("::") if p), modules)
            if resolved != module:
                found.add(resolved)
    return found


def longest(path, modules):
    """The longest prefix of `path` that is a module."""
    for n in range(len(path), -1, -1):
        if path[:n] in modules:
            return path[:n]
    return ()


def cycles(src):
    files = [p for p in src.rglob("*.rs") if "tests" not in p.relative_to(src).parts]
    modules = {module_of(src, p): p for p in files}
    graph = {}
    for module, path in modules.items():
        text = code_of(path.read_text())
        graph[module] = targets(module, path.name == "mod.rs", text, modules)
    # Tarjan's strongly connected components.
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
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
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out, graph


def name(module):
    return "::".join(module) or "(root)"


def main():
    srcs = [pathlib.Path(a) for a in sys.argv[1:]] or sorted(
        p for p in ROOT.glob("*/src") if (p.parent / "Cargo.toml").exists()
    ) + [ROOT / "src"]
    bad = 0
    for src in srcs:
        found, graph = cycles(src)
        for component in found:
            bad += 1
            members = set(component)
            edges = [
                f"{name(a)} → {name(b)}"
                for a in component
                for b in sorted(graph[a])
                if b in members
            ]
            print(f"{src.relative_to(ROOT)}: cycle among {', '.join(map(name, component))}")
            for e in edges:
                print(f"    {e}")
    if bad:
        print(f"{bad} cycle(s)")
        return 1
    print(f"no module cycle in {len(srcs)} crates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
