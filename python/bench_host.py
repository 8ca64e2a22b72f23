#!/usr/bin/env python3
"""bench_host.py - the host time of fuseprof_torch's operators against
PyTorch eager: what a call costs the CPU, where the GPU is not the limit.

  --tiny     (default) M 64, K = N = 128: kernels shorter than the host's
             work; µs of wall a call over 3,000 calls (1,000 forward and
             backward), synchronised once at the end
  --enqueue  the block's shape (M 2048, K 768, N 2304): µs the host takes
             to enqueue a call, the median of 20 windows of 40 calls (10
             forward and backward) with no synchronisation inside a window

Each figure for fuseprof's public function (an autograd.Function in eager
mode), its custom op (what torch.compile calls), the library call alone
through ctypes, and the eager PyTorch equivalent. Needs a GPU, PyTorch and
libfuseprof-kernels ($FUSEPROF_KERNELS_LIB or an in-tree build).

    FUSEPROF_KERNELS_LIB=$PWD/libfuseprof-kernels.so.0 python3 ../python/bench_host.py --enqueue
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import fuseprof_torch as fpt  # noqa: E402
from fuseprof_torch import _lib, ops  # noqa: E402


def wall(fn, n):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def enqueue(fn, n):
    for _ in range(5):
        fn()
    ws = []
    for _ in range(20):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        ws.append((time.perf_counter() - t) / n * 1e6)
    torch.cuda.synchronize()
    return statistics.median(ws)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--tiny", action="store_true")
    g.add_argument("--enqueue", action="store_true")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("bench_host: no CUDA device", file=sys.stderr)
        return 77
    measure, n1, n2 = (enqueue, 40, 10) if a.enqueue else (wall, 3000, 1000)
    M, K, N = (2048, 768, 2304) if a.enqueue else (64, 128, 128)
    dev = "cuda"
    torch.manual_seed(0)
    for dt in (torch.float32, torch.bfloat16):
        print(f"== {str(dt)[6:]}, M {M}, K {K}, N {N}: µs a call "
              f"({'to enqueue' if a.enqueue else 'of wall'})")
        x = torch.randn(M, K, device=dev, dtype=dt)
        g_ = 1 + 0.1 * torch.randn(K, device=dev, dtype=dt)
        b = 0.1 * torch.randn(K, device=dev, dtype=dt)
        W = torch.randn(N, K, device=dev, dtype=dt) / K ** 0.5
        bias = torch.randn(N, device=dev, dtype=dt)
        dy = torch.randn(M, N, device=dev, dtype=dt)
        leaves = [t.clone().requires_grad_() for t in (x, g_, b, W, bias)]
        xr, gr, br, Wr, biasr = leaves
        d = ops._DT[dt]
        h = _lib.lib()
        st = ops._stream(x)
        buf, _ = ops._folded(g_, b, W, bias)
        y = torch.empty(M, N, device=dev, dtype=dt)
        wsf = ops._workspace(ops._size("fpk_ln_linear_fwd_workspace", M, K, N, d), x)
        fa = (x.data_ptr(), buf.data_ptr(), y.data_ptr(), M, K, N, d, ops._ptr(wsf),
              ops._nbytes(wsf), st)
        wsb = ops._workspace(ops._size("fpk_ln_linear_bwd_workspace", M, K, N, d), x)
        outs = [torch.empty_like(t) for t in (x, g_, b, W, bias)]
        ba = tuple(t.data_ptr() for t in (dy, x, g_, b, W, *outs)) + (
            M, K, N, d, ops._ptr(wsb), ops._nbytes(wsb), st)
        S = 256 if a.enqueue else 64
        s = torch.randn(8 if a.enqueue else 2, 12 if a.enqueue else 4, S, S, device=dev,
                        dtype=dt)
        sr = s.clone().requires_grad_()
        mask = torch.ones(S, S, dtype=torch.bool, device=dev).tril()
        rows = [
            ("LayerNorm+Linear forward: eager",
             lambda: F.linear(F.layer_norm(x, (K,), g_, b), W, bias), n1),
            ("  fpt.ln_linear (Function)", lambda: fpt.ln_linear(x, g_, b, W, bias), n1),
            ("  torch.ops.fuseprof.ln_linear (custom op)",
             lambda: torch.ops.fuseprof.ln_linear(x, g_, b, W, bias), n1),
            ("  the library alone (fpk_ln_linear_fwd)", lambda: h.fpk_ln_linear_fwd(*fa), n1),
            ("LayerNorm+Linear forward+backward: eager",
             lambda: torch.autograd.backward(F.linear(F.layer_norm(xr, (K,), gr, br), Wr,
                                                      biasr), dy), n2),
            ("  fpt.ln_linear (Function)",
             lambda: torch.autograd.backward(fpt.ln_linear(xr, gr, br, Wr, biasr), dy), n2),
            ("  custom op",
             lambda: torch.autograd.backward(torch.ops.fuseprof.ln_linear(xr, gr, br, Wr,
                                                                          biasr), dy), n2),
            ("  the library's backward alone (fpk_ln_linear_bwd)",
             lambda: h.fpk_ln_linear_bwd(*ba), n2),
            ("LayerNorm+GELU forward+backward: eager",
             lambda: torch.autograd.backward(F.gelu(F.layer_norm(xr, (K,), gr, br),
                                                    approximate="tanh"), x), n2),
            ("  fpt.ln_gelu (Function)",
             lambda: torch.autograd.backward(fpt.ln_gelu(xr, gr, br), x), n2),
            ("  custom op",
             lambda: torch.autograd.backward(torch.ops.fuseprof.ln_gelu(xr, gr, br, 0), x),
             n2),
            ("causal softmax forward+backward: eager",
             lambda: torch.autograd.backward(torch.softmax(
                 sr.masked_fill(~mask, float("-inf")) * 0.125, -1), s), n2),
            ("  fpt.softmax (Function)",
             lambda: torch.autograd.backward(fpt.softmax(sr, 0.125, True), s), n2),
            ("  custom op",
             lambda: torch.autograd.backward(torch.ops.fuseprof.softmax(sr, 0.125, True), s),
             n2),
        ]
        for name, fn, n in rows:
            print(f"{name:52s} {measure(fn, n):9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
