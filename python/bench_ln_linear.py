#!/usr/bin/env python3
"""bench_ln_linear.py - time fuseprof's fused LayerNorm+Linear (through
fuseprof_torch) against PyTorch's LayerNorm + Linear, eager and under
torch.compile: the forward, and one backward (the graph built once, each
call only its backward, as fuseprof's ln_linear_bwd op). GPU kernel time
from torch.profiler (CUPTI), the mean of 30 calls rotating over 4 input
sets, as fuseprof and bench/torch-baselines.py time.

    python3 python/bench_ln_linear.py [--dtype fp32|bf16|both] [--shape M,K,N ...]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import fuseprof_torch as fpt  # noqa: E402

SHAPES = [(16, 8, 16), (16384, 768, 256), (4096, 4096, 1024), (16384, 4096, 16384)]


def torch_lnl(x, g, b, W, bias):
    return F.linear(F.layer_norm(x, (x.shape[-1],), g, b, eps=1e-5), W, bias)


def kernel_us(calls, n=30):
    keep = [None] * len(calls)
    for i, c in enumerate(calls):
        keep[i] = c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(n):
            keep[i % len(calls)] = calls[i % len(calls)]()
        torch.cuda.synchronize()
    return sum(e.self_device_time_total for e in p.key_averages()) / n


def sets(M, K, N, dt, grad):
    out = []
    W = (torch.randn(N, K, device="cuda") / K ** 0.5).to(dt).requires_grad_(grad)
    g = (1 + 0.1 * torch.randn(K, device="cuda")).to(dt).requires_grad_(grad)
    b = (0.1 * torch.randn(K, device="cuda")).to(dt).requires_grad_(grad)
    bias = (0.1 * torch.randn(N, device="cuda")).to(dt).requires_grad_(grad)
    for _ in range(4):
        x = torch.randn(M, K, device="cuda").to(dt).requires_grad_(grad)
        out.append((x, g, b, W, bias))
    return out


def fwd_calls(fn, ins):
    return [lambda a=a: fn(*a) for a in ins]


def bwd_calls(fn, ins):
    calls = []
    for a in ins:
        y = fn(*a)
        dy = torch.randn_like(y)
        calls.append(lambda y=y, dy=dy, a=a: torch.autograd.grad(y, a, dy, retain_graph=True))
    return calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=["fp32", "bf16", "both"], default="both")
    ap.add_argument("--shape", action="append", default=[], help="M,K,N (repeatable)")
    a = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split(",")) for s in a.shape] or SHAPES
    dts = {"fp32": [torch.float32], "bf16": [torch.bfloat16],
           "both": [torch.float32, torch.bfloat16]}[a.dtype]
    # one graph per shape, dtype and grad mode: more than dynamo keeps by default
    for k in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, k):
            setattr(torch._dynamo.config, k, 64)
    comp = torch.compile(torch_lnl, dynamic=False)
    print("shape M,K,N dtype: kernel time a call in us (fused / eager / compiled), "
          "ratio fused/eager, fused/compiled")
    for M, K, N in shapes:
        for dt in dts:
            row = []
            for grad, make in ((False, fwd_calls), (True, bwd_calls)):
                ins = sets(M, K, N, dt, grad)
                t = [kernel_us(make(fn, ins)) for fn in (fpt.ln_linear, torch_lnl, comp)]
                row.append(t)
                del ins
            for what, t in zip(("forward", "backward"), row):
                print(f"{M},{K},{N} {str(dt)[6:]:<8} {what:<8} {t[0]:9.1f} {t[1]:9.1f} "
                      f"{t[2]:9.1f}   {t[0] / t[1]:.3f} {t[0] / t[2]:.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
