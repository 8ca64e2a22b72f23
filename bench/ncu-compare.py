#!/usr/bin/env python3
"""ncu-compare.py - fuseprof's counters beside Nsight Compute's, kernel by
kernel, as a Markdown table (bench/collector.sh runs it on a GPU machine).

Usage: ncu-compare.py LABEL=RUN.db... NCU.csv...
Each database comes from a `fuseprof run` (e.g. "op=acc.db" for the
default op replay, "kernel=acck.db" for --replay kernel), labelled for the
table's columns; the CSV files from `ncu --csv --print-units base
--print-kernel-base mangled --metrics ...`. Kernels are matched by mangled
name; ncu's last launch of each kernel is the one compared."""
import csv
import sqlite3
import sys


def fuseprof_counters(path):
    """{mangled: (label, {metric: value})} from the newest op of each kernel."""
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT k.mangled, k.name, o.workload || '/' || o.variant, k.idx,"
        " (SELECT count(*) FROM kernels k2 WHERE k2.op_id = o.id),"
        " c.metric, c.value FROM kernels k JOIN ops o ON o.id = k.op_id"
        " JOIN counters c ON c.kernel_id = k.id ORDER BY o.id")
    out = {}
    for mangled, name, op, idx, nk, metric, value in rows:
        label = "%s (%s, kernel %d of %d)" % (name.split("(")[0].replace("void ", ""),
                                             op, idx + 1, nk)
        entry = out.setdefault(mangled, [label, {}])
        entry[0] = label
        entry[1][metric] = value
    return out


def ncu_counters(paths):
    """{mangled: {metric: value}} from ncu's last launch of each kernel."""
    out = {}
    for path in paths:
        with open(path, newline="") as f:
            lines = [l for l in f if l.startswith('"')]
        for row in csv.DictReader(lines):
            try:
                v = float(row["Metric Value"].replace(",", ""))
            except ValueError:
                continue
            key = row["Kernel Name"]
            launch = int(row["ID"])
            entry = out.get(key)
            if entry is None or entry[0] < launch:
                entry = out[key] = [launch, {}]
            if entry[0] == launch:
                entry[1][row["Metric Name"]] = v
    return {k: v[1] for k, v in out.items()}


def pct(a, b):
    if b == 0:
        return "exact" if a == 0 else "n/a"
    d = 100.0 * (a / b - 1)
    return "exact" if a == b else "%+.2f%%" % d


def main():
    dbs = [a.split("=", 1) for a in sys.argv[1:] if "=" in a]
    csvs = [a for a in sys.argv[1:] if "=" not in a]
    if not dbs or not csvs:
        sys.exit(__doc__)
    runs = [(label, fuseprof_counters(path)) for label, path in dbs]
    ncu = ncu_counters(csvs)
    print("| kernel | metric | " + " | ".join(
        "fuseprof (%s) | vs ncu" % label for label, _ in runs) + " | ncu |")
    print("| --- | --- |" + " ---: | ---: |" * len(runs) + " ---: |")
    for mangled, (label, _) in runs[0][1].items():
        if mangled not in ncu:
            continue
        for metric in sorted(ncu[mangled]):
            n = ncu[mangled][metric]
            cells = []
            for _, run in runs:
                v = run.get(mangled, [None, {}])[1].get(metric)
                cells += ["%.0f" % v, pct(v, n)] if v is not None else ["", ""]
            print("| %s | %s | %s | %.0f |" % (
                label, metric.replace("sm__sass_thread_inst_executed_op_", "")
                .replace("_pred_on", ""), " | ".join(cells), n))


if __name__ == "__main__":
    main()
