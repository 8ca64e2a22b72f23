#!/usr/bin/env python3
"""ncu-sass.py - where a kernel's warps spend their time, from Nsight
Compute's per-instruction warp samples: the shares of the stall reasons,
of each code region, of each opcode, and the instructions with the most
samples, one section per kernel.

Usage: ncu-sass.py [--kernel REGEX] [--exclude REGEX] [--top N] SOURCE.csv

SOURCE.csv is `ncu -i REPORT.ncu-rep --page source --csv --print-source sass`
of a report collected with `--section SourceCounters` (one block per
profiled kernel, each opening with its "Kernel Name" line). A region is
the instructions executed the same number of times: a loop's body, the
code run once a tile, once a warp; in a kernel whose loop runs k times a
tile its body's count is k times the tile code's, so the regions read as
the kernel's structure. --exclude leaves out instructions whose SASS
matches (e.g. 'UCGABAR_WAIT': warps parked at a cluster barrier for the
whole kernel, which are sampled but hold nothing up). --kernel keeps the
kernels whose name matches. The reasons beside a region are shares of
the kernel's samples, as the region's own share is. Exit status 2 for bad
arguments or input. bench/RESULTS.md's sections on the wgmma kernels'
k-tile and the x-as-A kernel's epilogue read such samples this way."""
import argparse
import collections
import csv
import re
import sys

ALL = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def kernels(path):
    """[(name, header, rows)] in the file's order."""
    out = []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                out.append([row[1] if len(row) > 1 else "?", None, []])
            elif not out:
                raise ValueError("no \"Kernel Name\" line before the first row")
            elif out[-1][1] is None:
                out[-1][1] = row
            else:
                out[-1][2].append(row)
    for name, header, _ in out:
        if header is None or "Source" not in header or ALL not in header:
            raise ValueError("kernel %s: no SASS header with warp samples "
                             "(--page source --print-source sass of a report "
                             "with --section SourceCounters)" % name)
    return out


def number(s):
    try:
        return int(float(s)) if s not in ("", "-") else 0
    except ValueError:
        return 0


def opcode(sass):
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def pct(part, whole):
    return 100.0 * part / whole if whole else 0.0


def summarize(name, header, rows, exclude, top, out):
    ix = {h: i for i, h in enumerate(header)}
    stalls = [h for h in header if h.startswith("stall_") and "(Not" not in h]
    insts = []
    for row in rows:
        if len(row) < len(header):
            continue
        sass = row[ix["Source"]].strip()
        if exclude and exclude.search(sass):
            continue
        reasons = collections.Counter({h[6:]: number(row[ix[h]]) for h in stalls})
        insts.append((number(row[ix[ALL]]), row[ix.get("Address", 0)], sass,
                      number(row[ix[EXECUTED]]) if EXECUTED in ix else 0, reasons))
    total = sum(i[0] for i in insts)
    out.write("== %s\n%d samples over %d instructions\n" % (name, total, len(insts)))
    if not total:
        return

    def reasons_of(group, n):
        c = collections.Counter()
        for i in group:
            c.update(i[4])
        return " ".join("%s %.0f%%" % (r, pct(v, total)) for r, v in c.most_common(n) if v)

    out.write("stall reasons: %s\n" % reasons_of(insts, 8))
    regions = collections.defaultdict(list)
    for i in insts:
        regions[i[3]].append(i)
    out.write("regions (executed, instructions, share, reasons):\n")
    for ex, group in sorted(regions.items(), key=lambda kv: -sum(i[0] for i in kv[1]))[:top]:
        s = sum(i[0] for i in group)
        if s:
            out.write("  %10d %5d %5.1f%%  %s\n" % (ex, len(group), pct(s, total),
                                                 reasons_of(group, 3)))
    ops = collections.Counter()
    for i in insts:
        ops[opcode(i[2])] += i[0]
    out.write("opcodes: %s\n" % " ".join("%s %.1f%%" % (o, pct(v, total))
                                         for o, v in ops.most_common(top) if v))
    out.write("instructions:\n")
    for s, addr, sass, ex, reasons in sorted(insts, key=lambda i: -i[0])[:top]:
        if s:
            why = " ".join("%s=%d" % (r, v) for r, v in reasons.most_common(3) if v)
            out.write("  %5.1f%% %8s %-50s executed %d  %s\n" % (pct(s, total), addr[-6:],
                                                               sass[:50], ex, why))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", help="only kernels whose name matches this regex")
    ap.add_argument("--exclude", help="leave out instructions whose SASS matches")
    ap.add_argument("--top", type=int, default=12, help="rows a list (default 12)")
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    a = ap.parse_args()
    if a.top < 1:
        ap.error("--top: must be at least 1")
    try:
        want = re.compile(a.kernel) if a.kernel else None
        exclude = re.compile(a.exclude) if a.exclude else None
    except re.error as e:
        ap.error("bad regex: %s" % e)
    try:
        ks = kernels(a.csv)
    except (OSError, ValueError, csv.Error) as e:
        sys.stderr.write("ncu-sass.py: %s: %s\n" % (a.csv, e))
        return 2
    shown = 0
    for name, header, rows in ks:
        if want and not want.search(name):
            continue
        summarize(name, header, rows, exclude, a.top, sys.stdout)
        shown += 1
    if not shown:
        sys.stderr.write("ncu-sass.py: %s: no kernel%s\n" %
                         (a.csv, " matches " + a.kernel if a.kernel else ""))
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # a pager or head closed the pipe: not an error
        sys.stderr.close()
        sys.exit(0)
