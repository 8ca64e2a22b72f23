# torch-baselines.py - what a user would run instead of fuseprof's
# memory-bound kernels: PyTorch eager and torch.compile for LayerNorm+GELU
# (tanh), softmax (plain, scaled+causal-masked, backward), RMSNorm and
# SwiGLU (forward and backward) at the shapes
# bench/RESULTS.md compares with, timed with triton's do_bench (median, L2
# cleared between calls). One line per op. --kernel-time instead times the
# torch.compile kernels as fuseprof times its own: GPU kernel time from
# CUPTI (torch.profiler), 50 calls rotating over four input sets.
# Usage on a GPU machine: python3 bench/torch-baselines.py [--no-compile | --kernel-time]
import sys
import torch
import torch.nn.functional as F
from triton.testing import do_bench

compile_too = "--no-compile" not in sys.argv
M = 16384


def kernel_time():
    """Mean GPU kernel time per call of torch.compile'd LayerNorm+GELU and
    softmax at 16384x4096, from the profiler's CUPTI records."""
    from torch.profiler import profile, ProfilerActivity
    for dt in (torch.float32, torch.bfloat16):
        g = torch.randn(4096, device="cuda", dtype=dt)
        b = torch.randn(4096, device="cuda", dtype=dt)
        ops = [("ln_gelu_fwd", lambda x: ln_gelu(x, g, b)),
               ("softmax_fwd", lambda x: torch.softmax(x, dim=-1))]
        for name, fn in ops:
            f = torch.compile(fn, dynamic=False)
            xs = [torch.randn(M, 4096, device="cuda", dtype=dt) for _ in range(4)]
            for x in xs:
                f(x)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as p:
                for i in range(50):
                    f(xs[i % 4])
                torch.cuda.synchronize()
            total = sum(e.self_device_time_total for e in p.key_averages())
            print(f"{name} {str(dt)[6:]} M={M},N=4096: torch.compile kernel time "
                  f"{total / 50:.1f} us a call (mean of 50)", flush=True)


def us(fn):
    return do_bench(fn, return_mode="median") * 1e3


def line(name, dt, shape, eager, compiled=None):
    c = "" if compiled is None else f", torch.compile {compiled:.1f} us"
    print(f"{name} {str(dt)[6:]} {shape}: eager {eager:.1f} us{c}", flush=True)


def ln_gelu(x, g, b):
    return F.gelu(F.layer_norm(x, (x.shape[-1],), g, b), approximate="tanh")


def masked(x, scale, mask):
    return torch.softmax(x * scale + mask, dim=-1)


if "--kernel-time" in sys.argv:
    kernel_time()
    sys.exit(0)


for dt, N in ((torch.float32, 768), (torch.float32, 4096), (torch.bfloat16, 4096)):
    t = dict(device="cuda", dtype=dt)
    x = torch.randn(M, N, **t)
    g = torch.randn(N, **t)
    b = torch.randn(N, **t)
    f = torch.compile(ln_gelu, dynamic=False)
    comp = us(lambda: f(x, g, b)) if compile_too else None
    line("ln_gelu_fwd", dt, f"M={M},N={N}", us(lambda: ln_gelu(x, g, b)), comp)
    xs = [p.clone().requires_grad_() for p in (x, g, b)]
    y = ln_gelu(*xs)
    dy = torch.randn_like(y)
    line("ln_gelu_bwd (autograd)", dt, f"M={M},N={N}",
         us(lambda: torch.autograd.grad(y, xs, dy, retain_graph=True)))

for dt in (torch.float32, torch.bfloat16):
    t = dict(device="cuda", dtype=dt)
    x = torch.randn(M, 4096, **t)
    sm = lambda x: torch.softmax(x, dim=-1)
    f = torch.compile(sm, dynamic=False)
    comp = us(lambda: f(x)) if compile_too else None
    line("softmax_fwd", dt, f"M={M},N=4096", us(lambda: sm(x)), comp)
    mask = torch.triu(torch.full((M, 4096), float("-inf"), **t), diagonal=1)
    f = torch.compile(masked, dynamic=False)
    comp = us(lambda: f(x, 0.125, mask)) if compile_too else None
    line("softmax_masked_fwd", dt, f"M={M},N=4096", us(lambda: masked(x, 0.125, mask)), comp)
    xs = x.clone().requires_grad_()
    y = torch.softmax(xs, dim=-1)
    dy = torch.randn_like(y)
    line("softmax_bwd (autograd)", dt, f"M={M},N=4096",
         us(lambda: torch.autograd.grad(y, xs, dy, retain_graph=True)))


# RMSNorm and SwiGLU (issue #20): eager and torch.compile of the forward,
# and of the backward written out as the same expression fuseprof's
# kernels compute (dx, dgamma; da|db packed as the input).
def rmsnorm(x, g):
    return F.rms_norm(x, (x.shape[-1],), weight=g, eps=1e-5)


def rmsnorm_bwd(dy, x, g):
    xf, dyf = x.float(), dy.float()
    r = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
    xh = xf * r
    gd = dyf * g.float()
    dx = r * (gd - xh * (gd * xh).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dyf * xh).sum(0).to(x.dtype)


def swiglu(p):
    a, b = p.chunk(2, dim=-1)
    return F.silu(a) * b


def swiglu_bwd(dy, p):
    a, b = p.float().chunk(2, dim=-1)
    s = torch.sigmoid(a)
    d = dy.float()
    return torch.cat((d * b * s * (1 + a * (1 - s)), d * a * s), -1).to(p.dtype)


for dt in (torch.float32, torch.bfloat16):
    for N in (768, 4096):
        t = dict(device="cuda", dtype=dt)
        x = torch.randn(M, N, **t)
        g = torch.randn(N, **t)
        dy = torch.randn(M, N, **t)
        shape = f"M={M},N={N}"
        for name, fn, args in (("rmsnorm_fwd", rmsnorm, (x, g)),
                               ("rmsnorm_bwd", rmsnorm_bwd, (dy, x, g))):
            f = torch.compile(fn, dynamic=False)
            comp = us(lambda: f(*args)) if compile_too else None
            line(name, dt, shape, us(lambda: fn(*args)), comp)
        p = torch.randn(M, 2 * N, **t)
        for name, fn, args in (("swiglu_fwd", swiglu, (p,)),
                               ("swiglu_bwd", swiglu_bwd, (dy, p))):
            f = torch.compile(fn, dynamic=False)
            comp = us(lambda: f(*args)) if compile_too else None
            line(name, dt, shape, us(lambda: fn(*args)), comp)
