#!/bin/sh
# test-torch-gpu.sh - fuseprof_torch on a GPU against PyTorch autograd
# (skips with 77 without a GPU, python3 with torch, or the library): the
# LayerNorm+Linear check script at the puzzle's and the suite's shapes and
# at the decode shapes (whose forward must take the decode kernel or
# split-K),
# LayerNorm+GELU and softmax gradient by gradient, torch.compile without a
# graph break, and a short run of the training example (fused and plain
# PyTorch from one seed: the loss curves agree).
. "${srcdir:-.}/tests/setup"
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU" >&2; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3" >&2; exit 77; }
python3 -c "import torch" >/dev/null 2>&1 || { echo "SKIP: python3 has no torch" >&2; exit 77; }
: "${FUSEPROF_KERNELS_LIB:=${top_builddir:-.}/libfuseprof-kernels.so.0}"
[ -f "$FUSEPROF_KERNELS_LIB" ] || { echo "SKIP: no $FUSEPROF_KERNELS_LIB" >&2; exit 77; }
FUSEPROF_KERNELS_LIB=$(cd "$(dirname "$FUSEPROF_KERNELS_LIB")" && pwd)/$(basename "$FUSEPROF_KERNELS_LIB")
export FUSEPROF_KERNELS_LIB
gpu_lock
python3 "$srcdir/python/check_ln_linear.py" || fail "check_ln_linear.py"
python3 "$srcdir/python/check_ln_linear.py" --decode || fail "check_ln_linear.py --decode"
python3 "$srcdir/tests/torch_ops.py" grads || fail "torch_ops.py grads"
python3 "$srcdir/python/examples/train_block.py" --steps 30 --width 256 --heads 4 \
	--seq 128 --batch 4 || fail "train_block.py fp32"
python3 "$srcdir/python/examples/train_block.py" --steps 30 --width 256 --heads 4 \
	--seq 128 --batch 4 --dtype bf16 || fail "train_block.py bf16"
