#!/usr/bin/env python3
"""Writes a SYNTHETIC submission with telemetry, for trying `mlbench report` and
`mlbench grid --per joule` without a run: the shipped example's report streams
(submissions/example, copied unchanged) and, beside each run's reports, telemetry files
as `mlbench run` writes them (docs/telemetry.md) for a few benches of every copy, with
made-up readings. Nothing in it was measured: every header says so (`tool`).

Each copy's GPU (`cuda:<copy>`, power readings) draws a constant 150 + 10·run + 5·copy W
(× --scale), and every copy also reads one CPU package (RAPL, a µJ counter wrapping at
2^32) drawing 60 W (× --scale), which the report shares between the copies. Each window
spans the entry's counted observations (train.avg × count, rounded up to a sample),
sampled at --hz; idle baselines of 30 s at 40 W per GPU and 20 W for the package.

Usage: scripts/energy-example.py DEST [--scale 1.0] [--hz 10] [--benches toy_reg,vae,convnet]
Then:  mlbench report DEST -g RTX        mlbench grid DEST OTHER --per joule
"""
import argparse
import json
import math
import pathlib
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "submissions" / "example"
TOOL = "synthetic (scripts/energy-example.py): made-up readings, not a measurement"
WRAP_UJ = 1 << 32


def entries(stream):
    """The entries of a legacy stream (`[` then `{…},` each, no closing bracket)."""
    text = stream.read_text().rstrip().rstrip(",")
    if not text.endswith("]"):
        text += "]"
    return json.loads(text)


def device(id_, source, counter):
    d = {"id": id_, "source": source, "power_reading": "instantaneous", "whole_board": True}
    if counter:
        d["counter"] = {"resolution_uj": 1.0, "wrap_raw": WRAP_UJ}
    return d


def lines(bench, copy, devices, watts, ticks, period_ns, window):
    """The lines of one file: header, samples of every device at every tick, marks."""
    name, start, end = window
    header = {"type": "header", "schema_version": 1, "tool": TOOL, "copy": copy,
              "sample_period_ns": period_ns, "devices": devices}
    if bench is not None:
        header["bench"] = bench
    out = [header]
    for tick in range(ticks + 1):
        t = tick * period_ns
        if tick == start:
            out.append({"type": "mark", "t_ns": t, "edge": "start", "window": name, "copy": copy})
        for i, (d, w) in enumerate(zip(devices, watts)):
            sample = {"type": "sample", "t_ns": t, "device": i}
            if "counter" in d:
                uj = round(w * t * 1e-3)
                sample["energy_raw"] = uj % WRAP_UJ
                sample["energy_uj"] = uj % WRAP_UJ
            else:
                sample["power_mw"] = w * 1000.0
                sample["util_pct"] = 85.0 if name == "train" else 0.0
            out.append(sample)
        if tick == end:
            out.append({"type": "mark", "t_ns": t, "edge": "end", "window": name, "copy": copy})
    return out


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dest", type=pathlib.Path)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--hz", type=float, default=10.0)
    p.add_argument("--benches", default="toy_reg,vae,convnet")
    args = p.parse_args()
    if args.dest.exists():
        raise SystemExit(f"{args.dest}: already there; give a new folder")
    shutil.copytree(EXAMPLE, args.dest)
    benches = set(args.benches.split(","))
    period = round(1e9 / args.hz)
    gpu = lambda c: device(f"cuda:{c}", "nvml", False)
    package = device("cpu:package-0", "rapl", True)
    for run_dir in sorted(args.dest.glob("output*")):
        run = int(run_dir.name.removeprefix("output"))
        tele = run_dir / "telemetry"
        tele.mkdir()
        for stream in sorted(run_dir.glob("*_*.json")):
            copy = int(stream.stem.rsplit("_", 1)[1])
            watts = [args.scale * (150 + 10 * run + 5 * copy), args.scale * 60.0]
            seen = {}
            for e in entries(stream):
                if e.get("name") not in benches:
                    continue
                n = seen[e["name"]] = seen.get(e["name"], 0) + 1
                timed = e["train"]["avg"] * e["train"]["count"]
                ticks = math.ceil(timed * 1e9 / period)
                name = f"{e['name']}.{copy}.jsonl" if n == 1 else f"{e['name']}.{copy}.{n}.jsonl"
                write(tele / name, lines(e["name"], copy, [gpu(copy), package], watts,
                                         ticks + 4, period, ("train", 2, ticks + 2)))
            idle_ticks = round(30e9 / period)
            write(tele / f"idle.cuda:{copy}.jsonl",
                  lines(None, copy, [gpu(copy)], [40.0], idle_ticks, period, ("idle", 0, idle_ticks)))
        idle_ticks = round(30e9 / period)
        write(tele / "idle.cpu.jsonl",
              lines(None, 0, [package], [20.0], idle_ticks, period, ("idle", 0, idle_ticks)))
    print(f"{args.dest}: the example's reports with synthetic telemetry for {', '.join(sorted(benches))}")


if __name__ == "__main__":
    main()
