#!/usr/bin/env python3
"""An independent restatement of the suite's last report tool (report.py@ce4e272,
docs/suite.md#the-score-tool), in plain Python (no pandas), used as a test oracle for `mlbench report
--scoring score`. It reads legacy streams the way 86a5816+ does (drop the trailing comma,
close the bracket), pools every entry, removes failures (all of them), and prints JSON.

Files are found as the HEAD tool finds them: `REPORTS_DIR/*/JOBS[_.]*.json` (one folder
per run, as run_10.sh left them) and `REPORTS_DIR/JOBS[_.]*.json` (per-test files, or
streams the suite appended every run to, without the move). Every entry of a name is
pooled, whatever its run, GPU or world size: scaling's reports for k = 1..N GPUs (whose
train_item is the efficiency) make one sample set, as in the HEAD tool.

EXPECTED (optional) lists the benches a complete submission has: a comma-separated list,
or `@targets` for every row of TARGETS_CSV but the excluded three. An expected bench with
no usable entry gets a row with n = 0 (numbers null) that fails both PM and ST, as
mlbench counts it; PG leaves it out (no perf). Without it, only the benches present are
scored, as the HEAD tool did.

usage: head_report.py REPORTS_DIR JOBS TARGETS_CSV [EXPECTED]
"""
import csv, glob, json, math, statistics, sys

EXCLUDE = {"convnet_distributed", "convnet_distributed_fp16", "dcgan_all"}


def read(path):
    text = open(path).read().strip()
    if text.startswith("[") and text.endswith(","):
        return json.loads(text[:-1] + "]")
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


def main(reports, jobs, targets_csv, expected=None):
    files = sorted(glob.glob(f"{reports}/*/{jobs}[_.]*.json") + glob.glob(f"{reports}/{jobs}[_.]*.json"))
    entries = [e for f in files for e in read(f) if e.get("name") not in EXCLUDE]
    total = len(entries)
    ok = [e for e in entries
          if e.get("completed", True) and not any(math.isnan(x) or math.isinf(x) for x in e.get("batch_loss", []))]
    failures = total - len(ok)
    bf = 1 if failures / total <= 0.01 else 0
    targets = {r["bench"]: r for r in csv.DictReader(open(targets_csv))}
    benches = {}
    for e in ok:
        if isinstance(e.get("name"), str):
            benches.setdefault(e["name"], []).append(e["train_item"]["avg"])
    rows = {}
    for name in sorted(benches):
        values = benches[name]
        mean = statistics.fmean(values)
        sd = statistics.stdev(values) if len(values) > 1 else float("nan")
        t = targets.get(name)
        target = float(t["target"]) if t else float("nan")
        perf = mean / target
        sd_pct = sd / mean
        rows[name] = {
            "n": len(values), "mean": mean, "sd": sd, "perf": perf, "sd_pct": sd_pct,
            "perf_pass": bool(t) and perf >= float(t["perf_target"]),
            "sd_pass": bool(t) and sd_pct <= float(t["sd_target"]),
        }
    if expected is not None:
        wanted = ([b for b in targets if b not in EXCLUDE] if expected == "@targets"
                  else [b for b in expected.split(",") if b])
        for name in wanted:
            rows.setdefault(name, {"n": 0, "mean": None, "sd": None, "perf": None, "sd_pct": None,
                                   "perf_pass": False, "sd_pass": False})
        rows = dict(sorted(rows.items()))
    perfs = [r["perf"] for n, r in rows.items()
             if n != "scaling" and r["perf"] is not None and not math.isnan(r["perf"])]
    pg = math.prod(perfs) ** (1 / len(perfs))
    pm = sum(r["perf_pass"] for r in rows.values()) / len(rows)
    st = sum(r["sd_pass"] for r in rows.values()) / len(rows)
    print(json.dumps({"benches": rows, "failures": failures, "total": total, "bf": bf,
                      "pm": pm, "st": st, "pg": pg, "score": bf * (2 * pm + st + 5 * pg)}))


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.strip().splitlines()[-1])
    main(*sys.argv[1:5])
