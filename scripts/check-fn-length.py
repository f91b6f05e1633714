#!/usr/bin/env python3
"""Finds functions longer than a limit (100 lines: the conventions' "functions under
~80 lines", with room) in the non-test code of every crate of the workspace.

A function runs from its `fn` line to its closing brace, both counted. Test code is left
out: a `#[cfg(test)]` module, inline or in its own file (`#[cfg(test)] mod x;`), and the
`tests/` and `benches/` folders. Strings, characters and comments are blanked before the
braces are counted. Prints each long function and exits 1 when there is one.
Usage: scripts/check-fn-length.py [LIMIT]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FN = re.compile(r"^\s*(pub(\([a-z:]+\))?\s+)?((const|async|unsafe|extern \"C\")\s+)*fn\s+(\w+)")
TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(pub(\([a-z:]+\))?\s+)?mod\s+(\w+)\s*;")


def blank(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return re.sub(r"//.*", "", line)


def test_files(src):
    """Files that are test modules declared `#[cfg(test)] mod x;` by their parent."""
    out = set()
    for path in src.rglob("*.rs"):
        for m in TEST_MOD.finditer(path.read_text()):
            folder = path.parent if path.name in ("lib.rs", "main.rs", "mod.rs") else path.with_suffix("")
            out.add(folder / f"{m.group(3)}.rs")
            out.add(folder / m.group(3) / "mod.rs")
    return out


def long_functions(path, limit):
    text = path.read_text()
    cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    lines = (text[: cut.start()] if cut else text).split("\n")
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        depth, started, j = 0, False, i
        while j < len(lines):
            code = blank(lines[j])
            depth += code.count("{") - code.count("}")
            started = started or "{" in code
            if started and depth <= 0:
                break
            if not started and code.rstrip().endswith(";"):
                break
            j += 1
        if started and j - i + 1 > limit:
            yield m.group(5), i + 1, j - i + 1
        i = j + 1 if started else i + 1


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    srcs = sorted(p for p in ROOT.glob("*/src") if (p.parent / "Cargo.toml").exists())
    srcs.append(ROOT / "src")
    found = []
    for src in srcs:
        skip = test_files(src)
        for path in sorted(src.rglob("*.rs")):
            if path in skip:
                continue
            for name, line, n in long_functions(path, limit):
                found.append(f"{path.relative_to(ROOT)}:{line}: `{name}` is {n} lines")
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} function(s) over {limit} lines")
        return 1
    print(f"no function over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
