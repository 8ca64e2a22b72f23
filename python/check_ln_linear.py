#!/usr/bin/env python3
"""check_ln_linear.py - fuseprof's fused LayerNorm+Linear (forward and custom
backward, through fuseprof_torch) against PyTorch autograd in float64, the
gradients one by one, with a PASS/FAIL per line.

For every shape and dtype: the forward output and grad_input,
grad_ln_weight, grad_ln_bias, grad_linear_weight, grad_linear_bias, each
as the relative error ||out - ref||_2 / ||ref||_2 against PyTorch autograd
run in float64 on the same (dtype-rounded) inputs; beside it the error of
PyTorch's own autograd in the same dtype, for scale. Tolerances: float32
1e-5, bfloat16 2e-2. Where the shape is small enough (--cpu-ref-max MACs),
fuseprof's own double-precision CPU reference (in libfuseprof-kernels) is
compared with PyTorch's float64 too: the two references must agree to
1e-12. The forward runs a second time on the same inputs and must give
the same bits (the split-K reduction adds its slices in a fixed order).
With --decode, the decode shapes (M = 1, 2, 8, 64 at 2048 -> 2048 and 3072
-> 9216, and 32 at 3072 -> 9216), whose forward must take the decode kernel (k_fwd_gemv: fp32 up
to 8 rows, bf16 up to two where W' is small, where decode=auto takes it), bf16 up to 16 rows
on Hopper the skinny kernel (k_fwd_skinny, skinny=auto: at one and two
rows where W' is over 80 KiB an SM) and from 17 to 64
its x-resident form on wgmma (k_fwd_skinny_wg, skinny_mma=auto) or, as
skinny_x=auto picks, the x~ kernel (k_fwd_skinny_xt where its tile of W'
is over half x's rows: 32 and 64 rows of 3072 -> 9216), or an x-streamed
one (from 33 rows k_fwd_skinny_xa
wherever a tile of W' runs in one wave: 64 rows of 2048 -> 2048; at 17 to
32 rows k_fwd_skinny_st where W' has 0.9 64-row tiles an SM or more, or
K >= 6144; all through the library's fold in perm32's order), or the split-K
kernels (k_fwd_split_reduce; on a GPU of fewer than 73 SMs the largest of
them fill it without splitting): the
forward's kernels are listed from torch.profiler, and a decode forward
without the one its rows call for fails. Exit status 1 if any line fails.

Usage on a GPU machine (FUSEPROF_KERNELS_LIB pointing at the library, or
an installed one):
    python3 python/check_ln_linear.py                 # puzzle + suite shapes
    python3 python/check_ln_linear.py --full          # up to 16384x4096->16384
    python3 python/check_ln_linear.py --shape 4,4,8,16 --dtype bf16
    python3 python/check_ln_linear.py --decode        # decode rows
"""
import argparse
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import fuseprof_torch as fpt  # noqa: E402
from fuseprof_torch import _lib  # noqa: E402

TOL = {torch.float32: 1e-5, torch.bfloat16: 2e-2}
NAMES = ["forward", "grad_input", "grad_ln_weight", "grad_ln_bias",
         "grad_linear_weight", "grad_linear_bias"]

# (leading dims of x, K, N): the puzzle's [4, 4, 8] -> [4, 4, 16], odd
# sizes, the suite's shapes; --full adds the largest. Few rows take the
# split-K forward: at 1 x 768 -> 256, 37 x 1000 -> 300 (a short last slice
# ending in a partial k-tile, N past a multiple of 32) and 1 x 2048 -> 40
# (columns of W''s padding rows) it reads, in bf16 on a Hopper GPU, the
# warp-specialized kernel's permuted fold, its rows of 1000 elements
# 1024 apart (whole 128-byte lines), as 24 x 6152 -> 700 (the x-streamed
# kernel over slices of K, a partial last k-tile) reads them 6208 apart.
SHAPES = [((4, 4), 8, 16), ((3, 5), 17, 33), ((1,), 768, 256), ((37,), 1000, 300),
          ((1,), 2048, 40), ((2048,), 768, 256), ((16384,), 768, 256),
          ((4096,), 4096, 1024), ((24,), 6152, 700)]
FULL = [((16384,), 4096, 16384)]
DECODE = [((m,), k, n) for k, n in ((2048, 2048), (3072, 9216)) for m in (1, 2, 8, 64)] + [
    ((32,), 3072, 9216)]

_lib.SIGNATURES.update({
    "fpk_ref_ln_linear_fwd": (ctypes.c_int, [ctypes.c_void_p] * 6 + [ctypes.c_long] * 3),
    "fpk_ref_ln_linear_bwd": (ctypes.c_int, [ctypes.c_void_p] * 10 + [ctypes.c_long] * 3),
})


def rel(out, ref):
    out = out.double()
    d = torch.linalg.vector_norm(out - ref)
    r = torch.linalg.vector_norm(ref)
    return (d / r).item() if r > 0 else d.item()


def torch_ln_linear(x, g, b, W, bias):
    return F.linear(F.layer_norm(x, (x.shape[-1],), g, b, eps=1e-5), W, bias)


def grads(fn, inputs, dy):
    ins = [t.detach().clone().requires_grad_() for t in inputs]
    y = fn(*ins)
    y.backward(dy)
    return [y.detach()] + [t.grad for t in ins]


def cpu_reference(inputs, dy):
    """The project's own double CPU reference (kernels/ln_linear/ref.c) on
    the same inputs: [y, dx, dgamma, dbeta, dW, db]."""
    x, g, b, W, bias = [t.detach().double().cpu().contiguous() for t in inputs]
    dyc = dy.double().cpu().contiguous()
    K = x.shape[-1]
    N = W.shape[0]
    M = x.numel() // K
    y = torch.empty(x.shape[:-1] + (N,), dtype=torch.float64)
    outs = [torch.empty_like(x), torch.empty_like(g), torch.empty_like(b),
            torch.empty_like(W), torch.empty_like(bias)]
    p = lambda t: ctypes.c_void_p(t.data_ptr())  # noqa: E731
    _lib.call("fpk_ref_ln_linear_fwd", p(x), p(g), p(b), p(W), p(bias), p(y), M, K, N)
    _lib.call("fpk_ref_ln_linear_bwd", p(x), p(g), p(b), p(W), p(dyc),
              *[p(o) for o in outs], M, K, N)
    return [y] + outs


def fwd_kernels(fn):
    """The short names of the CUDA kernels fn() launches, in order, from
    torch.profiler; None and the reason when the profiler cannot say."""
    from torch.profiler import ProfilerActivity, profile
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 (CUPTI busy or denied)
        return None, str(e)
    names = []
    for e in prof.events():
        if getattr(e, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        n = e.name.split("(")[0].split("<")[0].split()[-1]
        if n not in names:
            names.append(n)
    return names, None


def check(lead, K, N, dt, cpu_max, gen, split=False):
    dev = "cuda"
    x = torch.randn(*lead, K, generator=gen, device=dev).to(dt)
    g = (1 + 0.1 * torch.randn(K, generator=gen, device=dev)).to(dt)
    b = (0.1 * torch.randn(K, generator=gen, device=dev)).to(dt)
    W = (torch.randn(N, K, generator=gen, device=dev) / K ** 0.5).to(dt)
    bias = (0.1 * torch.randn(N, generator=gen, device=dev)).to(dt)
    dy = torch.randn(*lead, N, generator=gen, device=dev).to(dt)
    inputs = [x, g, b, W, bias]

    ref = grads(torch_ln_linear, [t.double() for t in inputs], dy.double())
    ours = grads(fpt.ln_linear, inputs, dy)
    theirs = grads(torch_ln_linear, inputs, dy)
    tol = TOL[dt]
    shape = f"{list(lead) + [K]} -> {list(lead) + [N]}"
    print(f"LayerNorm+Linear {shape} {str(dt)[6:]}  (tolerance {tol:g} relative, "
          "against PyTorch autograd in float64)")
    fails = 0
    for name, o, t, r in zip(NAMES, ours, theirs, ref):
        e = rel(o, r)
        ok = e <= tol and torch.isfinite(o).all().item()
        fails += not ok
        print(f"  {name:<20} fuseprof {e:9.3e}   torch {str(dt)[6:]:<8} {rel(t, r):9.3e}"
              f"   {'PASS' if ok else 'FAIL'}")
    with torch.no_grad():
        y1 = fpt.ln_linear(x, g, b, W, bias)
        y2 = fpt.ln_linear(x, g, b, W, bias)
    ok = torch.equal(y1.view(torch.int16 if dt == torch.bfloat16 else torch.int32),
                     y2.view(torch.int16 if dt == torch.bfloat16 else torch.int32))
    fails += not ok
    print(f"  {'forward twice':<20} the same bits: {'yes' if ok else 'no'}"
          f"   {'PASS' if ok else 'FAIL'}")
    if split:
        with torch.no_grad():
            names, why = fwd_kernels(lambda: fpt.ln_linear(x, g, b, W, bias))
        rows = x.numel() // K
        # decode=auto: fp32 up to 8 rows, bf16 up to two (on Hopper only
        # where W' is at most 80 KiB an SM, lnl_fwd_gemv_bf16_big); skinny=
        # auto: bf16 up to 64 rows on Hopper (ln_linear.h; from 17 rows the
        # x-resident kernel on wgmma, k_fwd_skinny_wg)
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        hopper = torch.cuda.get_device_capability()[0] == 9
        bf16 = x.dtype == torch.bfloat16
        gemv = rows <= (2 if bf16 else 8) and not (
            bf16 and hopper and 2 * K * N > (80 << 10) * sms)
        skinny = not gemv and bf16 and rows <= 64 and hopper
        # skinny_x=auto (lnl_fwd_skinny_x; N a multiple of 32 here): from
        # 33 rows the x-as-A kernel wherever a tile of W' runs in one wave
        # (lnl_skinny_xa_plan: one block an SM, so 96-row tiles over all
        # of K do where they are no more than the SMs); at 17 to 32 rows
        # the x-streamed kernel over slices of K from K = 6144
        # (lnl_skinny_st_plan), else as lnl_fwd_skinny_x
        tiles = (N + 63) // 64
        resident = "k_fwd_skinny_wg"
        if rows > 32 and (N + 95) // 96 <= sms:
            resident = "k_fwd_skinny_xa"
        elif rows <= 32 and K >= 6081:
            resident = "k_fwd_skinny_st"
        elif 10 * tiles >= 9 * sms:
            zone = rows > 32 and sms < tiles and 2 * tiles < 3 * sms
            resident = "k_fwd_skinny_xa" if zone else "k_fwd_skinny_st"
        # from 17 rows, before all of these, the x~ kernel where its tile
        # (the fewest rows of W', a multiple of 8 from 32 to 88, that make
        # no more blocks than SMs) is over half x's rows rounded up to 8
        # and, up to 32 rows, its blocks are 0.9 an SM or more
        # (lnl_skinny_xt_auto; the fold's rows are N rounded up to 32)
        np_ = (N + 31) // 32 * 32
        xt = next((t for t in range(32, 89, 8) if (np_ + t - 1) // t <= sms), 0)
        if rows > 16 and xt and (rows + 7) // 8 * 8 < 2 * xt and (
                rows > 32 or 10 * ((np_ + xt - 1) // xt) >= 9 * sms):
            resident = "k_fwd_skinny_xt"
        want = ("k_fwd_gemv" if gemv else resident if skinny and rows > 16
                else "k_fwd_skinny" if skinny else "k_fwd_split_reduce")
        ok = names is not None and want in names
        fails += not ok
        what = ", ".join(names) if names is not None else f"unknown ({why})"
        print(f"  {'decode forward':<20} kernels: {what} (want {want})"
              f"   {'PASS' if ok else 'FAIL'}")
    macs = 3.0 * x.numel() // K * K * N
    if macs <= cpu_max:
        cref = cpu_reference(inputs, dy)
        worst = max(rel(c, r.cpu()) for c, r in zip(cref, ref))
        ok = worst <= 1e-12
        fails += not ok
        print(f"  {'cpu reference':<20} fuseprof's double reference against "
              f"float64 autograd: {worst:9.3e}   {'PASS' if ok else 'FAIL'}")
    else:
        print(f"  {'cpu reference':<20} skipped ({macs:.3g} multiply-adds, over "
              f"--cpu-ref-max {cpu_max:.3g})")
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="add 16384x4096 -> 16384")
    ap.add_argument("--shape", action="append", default=[],
                    help="D1,...,K,N: x of [D1, ..., K] into N outputs (repeatable; "
                    "replaces the default shapes)")
    ap.add_argument("--decode", action="store_true",
                    help="the decode shapes (M = 1, 2, 8, 64 at 2048 -> 2048 and 3072 -> 9216, "
                    "32 at 3072 -> 9216) "
                    "instead of the default ones; their forward must take the decode "
                    "kernel or split-K")
    ap.add_argument("--dtype", choices=["fp32", "bf16", "both"], default="both")
    ap.add_argument("--cpu-ref-max", type=float, default=2e8,
                    help="largest shape (multiply-adds) the CPU reference checks")
    ap.add_argument("--seed", type=int, default=20261126)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("check_ln_linear: no CUDA device", file=sys.stderr)
        return 77
    shapes = DECODE if a.decode else SHAPES + (FULL if a.full else [])
    if a.shape:
        shapes = []
        for s in a.shape:
            try:
                v = [int(t) for t in s.split(",")]
            except ValueError:
                ap.error(f"--shape {s!r}: integers separated by commas")
            if len(v) < 3 or min(v) < 1:
                ap.error(f"--shape {s!r}: at least D1,K,N, each >= 1")
            shapes.append((tuple(v[:-2]), v[-2], v[-1]))
    dts = {"fp32": [torch.float32], "bf16": [torch.bfloat16],
           "both": [torch.float32, torch.bfloat16]}[a.dtype]
    gen = torch.Generator(device="cuda").manual_seed(a.seed)
    fails = 0
    for lead, K, N in shapes:
        for dt in dts:
            fails += check(lead, K, N, dt, a.cpu_ref_max, gen, split=a.decode)
    print(f"{'all lines passed' if fails == 0 else f'{fails} lines FAILED'}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
