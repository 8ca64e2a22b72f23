#!/bin/sh
# test-torch-args.sh - fuseprof_torch's argument checks (TypeError and
# ValueError naming the argument), wherever python3 has torch: skips (77)
# without python3 or torch, never fails for their absence.
. "${srcdir:-.}/tests/setup"
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3" >&2; exit 77; }
python3 -c "import torch" >/dev/null 2>&1 || { echo "SKIP: python3 has no torch" >&2; exit 77; }
python3 "$srcdir/tests/torch_ops.py" args
