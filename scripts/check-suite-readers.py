#!/usr/bin/env python3
"""Reads every per-GPU report stream under a folder the three ways the suite's own Python
report tools read them (docs/suite.md#the-stream-format), and checks each gives the
same entries with the fields those tools use. CI runs it on `mlbench run`'s output, to show
that the suite's tools would read it unchanged.

    python3 scripts/check-suite-readers.py OUT
"""

import glob
import json
import math
import os
import re
import sys

# The fields the suite's report tools read from an entry (docs/suite.md#report-tools).
FIELDS = ("name", "batch_size", "vcd", "train_item", "batch_loss", "unique_id", "version")


def read_fd9ee95(text):
    """common/report/read_report.py@fd9ee95 and milabench@17bb0c4: strip, drop the last
    character (the trailing comma), close the array."""
    return json.loads(text.strip()[:-1] + "]")


def read_c48adfc(text):
    """report.py@c48adfc: the same, unless the text already ends with `]`."""
    text = text.strip()
    return json.loads(text if text.endswith("]") else text[:-1] + "]")


def read_head(text):
    """report.py@86a5816…HEAD: a `[…,` stream becomes a list, anything else one object."""
    text = text.strip()
    if text.startswith("[") and text.endswith(","):
        return json.loads(text[:-1] + "]")
    return [json.loads(text)]


def check_discovery(root, streams):
    """The suite's tools find the streams by name (docs/suite.md#report-tools):
    `glob(DIR/run/{name}*)` with
    no extension filter (report.py@0ebeca5), `glob(DIR/**/{jobs}_*.json)` one level deep
    (milabench@17bb0c4). Whatever else a run folder holds (mlbench's `telemetry/`, its
    `.jsonl` files, system.json) must not be among what they find."""
    for path in streams:
        run, name = os.path.split(path)
        jobs = re.sub(r"_\d+\.json$", "", name)
        found = glob.glob(os.path.join(run, jobs + "*"))
        found += glob.glob(os.path.join(root, "**", jobs + "_*.json"))
        others = [f for f in found if not (os.path.isfile(f) and re.search(r"_\d+\.json$", f))]
        if others:
            sys.exit(f"{path}: the suite's discovery would also read {', '.join(sorted(others))}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    streams = sorted(
        p
        for p in glob.glob(os.path.join(root, "**", "*.json"), recursive=True)
        if re.search(r"_\d+\.json$", p)
    )
    if not streams:
        sys.exit(f"{root}: no report streams (*_<K>.json)")
    check_discovery(root, streams)
    entries = 0
    for path in streams:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        readings = [read(text) for read in (read_fd9ee95, read_c48adfc, read_head)]
        if not all(r == readings[0] for r in readings):
            sys.exit(f"{path}: the suite's readers disagree")
        for i, entry in enumerate(readings[0]):
            missing = [k for k in FIELDS if k not in entry]
            if missing:
                sys.exit(f"{path}: entry {i}: missing {', '.join(missing)}")
            avg = entry["train_item"]["avg"]
            if entry.get("completed", True) and not (isinstance(avg, float) and math.isfinite(avg) and avg > 0):
                sys.exit(f"{path}: entry {i}: train_item.avg {avg!r}")
        entries += len(readings[0])
    print(f"suite readers: {len(streams)} streams, {entries} entries read alike by all three")


if __name__ == "__main__":
    main()
