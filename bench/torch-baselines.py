# torch-baselines.py - what a user would run instead of fuseprof's
# memory-bound kernels: PyTorch eager and torch.compile for LayerNorm+GELU
# (tanh) and softmax (plain, scaled+causal-masked, backward) at the shapes
# bench/RESULTS.md compares with, and for the Workloads III patterns
# (RMSNorm, bias+dropout+residual, SwiGLU, bias+ReLU, the softplus chain),
# forward and backward, fp32 and bf16, at 16384x768 and 16384x4096, and
# attention + residual + LayerNorm (attn_res_ln_fwd: F.scaled_dot_product_
# attention, causal, on its flash backend for bf16 and its memory-efficient
# backend for fp32, which flash does not take; then x + o and F.layer_norm)
# at that workload's suite shapes; timed
# with triton's do_bench (median, L2 cleared between calls). One line per
# op. --kernel-time instead times the kernels as fuseprof times its own:
# GPU kernel time from CUPTI (torch.profiler), 50 calls rotating over four
# input sets (torch.compile for LayerNorm+GELU and softmax; eager and
# torch.compile for the Workloads III patterns, whose forwards are timed
# twice: for inference, and as a training step's forward, with the
# inputs requiring grad, writing what the backward reads). Dropout's times compare,
# its masks do not: PyTorch's RNG is not fuseprof's Philox stream.
# --only attn_res_ln_fwd times that workload's peers alone. Without
# PyTorch (or triton) it says so on stderr and exits 77, the test harness's
# skip.
# Usage on a GPU machine:
#   python3 bench/torch-baselines.py [--no-compile | --kernel-time] [--only attn_res_ln_fwd]
import sys

try:
    import torch
    import torch._dynamo
    import torch.nn.functional as F
    from triton.testing import do_bench
except ImportError as e:
    print(f"torch-baselines: skipped: {e} (PyTorch with triton is needed)", file=sys.stderr)
    sys.exit(77)

compile_too = "--no-compile" not in sys.argv
only_arl = "--only" in sys.argv
if only_arl and sys.argv[sys.argv.index("--only") + 1:][:1] != ["attn_res_ln_fwd"]:
    print("torch-baselines: --only takes attn_res_ln_fwd", file=sys.stderr)
    sys.exit(2)
M = 16384
# Each pattern compiles for 2 dtypes x 2 widths, with and without grad:
# more graphs of one function than dynamo keeps by default.
for k in ("recompile_limit", "cache_size_limit"):
    if hasattr(torch._dynamo.config, k):
        setattr(torch._dynamo.config, k, 64)


def rmsnorm(x, g):
    return F.rms_norm(x, (x.shape[-1],), weight=g, eps=1e-5)


def bias_dropout_add(x, bias, res):
    return F.dropout(x + bias, p=0.1, training=True) + res


def swiglu(xp):
    a, b = xp.chunk(2, dim=-1)
    return F.silu(a) * b


def bias_relu(x, bias):
    return F.relu(x + bias)


def softplus_chain(x):
    return torch.log(torch.exp(x) + 1)


# The Workloads III patterns as fuseprof names them (and a tag where two
# peers stand for one workload): the function, its inputs ("x": M x N, "v": N, "xp": the packed M x 2N), and which inputs
# the backward differentiates (bias_dropout_add: dx and dbias; the
# residual's gradient is dy itself).
PEERS = [
    ("rmsnorm", "", rmsnorm, ("x", "v"), (0, 1)),
    ("bias_dropout_add", "", bias_dropout_add, ("x", "v", "x"), (0, 1)),
    ("swiglu", "", swiglu, ("xp",), (0,)),
    ("bias_relu", "", bias_relu, ("x", "v"), (0, 1)),
    ("softplus_chain", " log(exp(x)+1)", softplus_chain, ("x",), (0,)),
    ("softplus_chain", " F.softplus", F.softplus, ("x",), (0,)),
]


# attn_res_ln_fwd's suite: (B, H, S, causal), D = 64.
ARL_SHAPES = [(16, 12, 1024, 1), (8, 25, 1024, 1), (4, 12, 2048, 1), (2, 12, 4096, 1),
              (16, 12, 1000, 1)]


def attn_res_ln(q, k, v, x, g, b, causal=True):
    """y = LayerNorm(x + SDPA(q, k, v)), the heads' outputs [B, H, S, D]
    laid out as x's [B, S, H*D] first, as fuseprof's workload defines it."""
    B, H, S, D = q.shape
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    o = o.transpose(1, 2).reshape(B, S, H * D)
    return F.layer_norm(x + o, (H * D,), g, b, eps=1e-5)


def attn_res_ln_full(q, k, v, x, g, b):
    return attn_res_ln(q, k, v, x, g, b, causal=False)


def arl_backend(dt):
    """The SDPA backend PyTorch's peer runs on: flash for bf16 (what the
    issue compares with), memory-efficient for fp32 (flash takes no fp32)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = SDPBackend.FLASH_ATTENTION if dt == torch.bfloat16 else SDPBackend.EFFICIENT_ATTENTION
    return be, sdpa_kernel(be)


def arl_inputs(B, H, S, dt, D=64):
    t = dict(device="cuda", dtype=dt)
    return [torch.randn(B, H, S, D, **t), torch.randn(B, H, S, D, **t),
            torch.randn(B, H, S, D, **t), torch.randn(B, S, H * D, **t),
            1 + 0.5 * torch.randn(H * D, **t), 0.5 * torch.randn(H * D, **t)]


def arl_baselines(timer):
    """attn_res_ln_fwd's peers, eager and torch.compile, at its suite
    shapes; timer(fn, sets) gives a call's time in us from one or more input
    sets."""
    for dt in (torch.float32, torch.bfloat16):
        be, ctx = arl_backend(dt)
        with ctx:
            fns = {1: attn_res_ln, 0: attn_res_ln_full}
            comp = {c: torch.compile(fn, dynamic=False) for c, fn in fns.items()}
            for B, H, S, causal in ARL_SHAPES:
                sets = [arl_inputs(B, H, S, dt) for _ in range(4)]
                eager = timer(fns[causal], sets)
                t = timer(comp[causal], sets) if compile_too else None
                line(f"attn_res_ln_fwd (sdpa {str(be).split('.')[-1].lower()})", dt,
                     f"B={B},H={H},S={S},D=64,causal={causal}", eager, t)
                del sets


def make(shapes, N, dt, grads=()):
    dims = {"x": (M, N), "v": (N,), "xp": (M, 2 * N)}
    return [torch.randn(*dims[s], device="cuda", dtype=dt).requires_grad_(i in grads)
            for i, s in enumerate(shapes)]


def forward_call(fn, shapes, N, dt, grads=()):
    """One forward of fn on fresh inputs; with grads (the inputs the
    backward differentiates) it is a training step's forward, which under
    torch.compile also writes what its backward will read (the partitioner
    picks what to save), as fuseprof's forward variants of a pair do."""
    xs = make(shapes, N, dt, grads)
    return lambda: fn(*xs)


def backward_call(fn, shapes, grads, N, dt):
    """One backward of fn on fresh inputs: the graph is built once and the
    call runs only its backward (retain_graph), as fuseprof's _bwd ops do."""
    xs = make(shapes, N, dt, grads)
    y = fn(*xs)
    dy = torch.randn_like(y)
    wrt = [xs[i] for i in grads]
    return lambda: torch.autograd.grad(y, wrt, dy, retain_graph=True)


def kernel_us(calls):
    """Mean GPU kernel time of one call in us: 50 calls rotating over
    calls (one per input set), from the profiler's CUPTI records. Each
    call's outputs are kept until its set comes round again, so the
    outputs rotate over as many buffers as the inputs do, as fuseprof's
    sets: were each output dropped at once, the caching allocator would
    hand the next call the same block, whose lines the last call left
    dirty in L2, and a small op would never pay for its writes reaching
    DRAM (bf16 at 16384x768 then reads as 3.1 TB/s, above the copy)."""
    from torch.profiler import profile, ProfilerActivity
    keep = [None] * len(calls)
    for _ in range(2):
        for i, c in enumerate(calls):
            keep[i] = c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(50):
            keep[i % len(calls)] = calls[i % len(calls)]()
        torch.cuda.synchronize()
    return sum(e.self_device_time_total for e in p.key_averages()) / 50


def kernel_time():
    """Mean GPU kernel time per call of torch.compile'd LayerNorm+GELU and
    softmax at 16384x4096, and of the Workloads III patterns eager and
    compiled, from the profiler's CUPTI records."""
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
    for dt in (torch.float32, torch.bfloat16):
        for N in (768, 4096):
            for name, tag, fn, shapes, grads in PEERS:
                f = torch.compile(fn, dynamic=False)
                for mode, g in (("eager", fn), ("torch.compile", f)):
                    for kind, gr in (("", ()), (" (training)", grads)):
                        fwd = [forward_call(g, shapes, N, dt, gr) for _ in range(4)]
                        t = kernel_us(fwd)
                        del fwd
                        print(f"{name}_fwd{tag} {str(dt)[6:]} M={M},N={N}: {mode}{kind} "
                              f"kernel time {t:.1f} us a call (mean of 50)", flush=True)
                    bwd = [backward_call(g, shapes, grads, N, dt) for _ in range(4)]
                    t = kernel_us(bwd)
                    del bwd
                    print(f"{name}_bwd{tag} {str(dt)[6:]} M={M},N={N}: {mode} kernel time "
                          f"{t:.1f} us a call (mean of 50)", flush=True)


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
    if not only_arl:
        kernel_time()
    arl_baselines(lambda fn, sets: kernel_us([(lambda xs=xs: fn(*xs)) for xs in sets]))
    sys.exit(0)

if only_arl:
    arl_baselines(lambda fn, sets: us(lambda: fn(*sets[0])))
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

for dt in (torch.float32, torch.bfloat16):
    for N in (768, 4096):
        for name, tag, fn, shapes, grads in PEERS:
            f = torch.compile(fn, dynamic=False)
            comp = us(forward_call(f, shapes, N, dt)) if compile_too else None
            line(f"{name}_fwd{tag}", dt, f"M={M},N={N}", us(forward_call(fn, shapes, N, dt)), comp)
            comp = us(backward_call(f, shapes, grads, N, dt)) if compile_too else None
            line(f"{name}_bwd{tag} (autograd)", dt, f"M={M},N={N}",
                 us(backward_call(fn, shapes, grads, N, dt)), comp)

arl_baselines(lambda fn, sets: us(lambda: fn(*sets[0])))
