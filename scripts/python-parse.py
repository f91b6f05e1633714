#!/usr/bin/env python3
"""The Python baseline of scripts/bench-report.sh: reads every report file of a suite
under a folder, in one process, the way the suite's last report tool did (report.py
86a5816..ce4e272, docs/suite.md#the-stream-format), and does nothing else: no statistics, no pandas.

For each file: `text = open(f).read().strip()`; a legacy stream (`[{...},{...},`, no
closing bracket) loses its trailing comma and gets a `]`; anything else is parsed as it
is, a bare object being one entry. The files are those `mlbench report` reads: every
`SUITE_<gpu>.json` stream and `SUITE.<bench>.R<run>.D<vcd>.<ts>.json` per-test file at any
depth below ROOT (the HEAD tool's glob `SUITE[_.]*.json`, one folder level deeper for each
vendor folder); the jobs file `SUITE.json` does not match it.

Prints `N files, M entries` on standard output.

usage: scripts/python-parse.py ROOT [SUITE]   (SUITE defaults to fast)
"""
import glob
import json
import os
import sys


def read(path):
    text = open(path).read().strip()
    if text.startswith("[") and text.endswith(","):
        return json.loads(text[:-1] + "]")
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    root = sys.argv[1]
    suite = sys.argv[2] if len(sys.argv) == 3 else "fast"
    if not os.path.isdir(root):
        sys.exit(f"{root}: not a folder")
    files = sorted(glob.glob(os.path.join(glob.escape(root), "**", f"{suite}[_.]*.json"), recursive=True))
    entries = 0
    for path in files:
        entries += len(read(path))
    print(f"{len(files)} files, {entries} entries")


if __name__ == "__main__":
    main()
