# ln_linear/torch-baseline.py - what a user would run instead: PyTorch
# eager LayerNorm+Linear, the Linear alone (cuBLAS), the autograd backward,
# and with --compile the same under torch.compile; timed with triton's
# do_bench (median), at the ln_linear suite shapes or the shapes given.
# Usage on a GPU machine:
#   python3 kernels/ln_linear/torch-baseline.py [bf16|fp32]... [--compile] [M,K,N]...
# (default: both dtypes, M=16384 at (K, N) = (768, 256), (4096, 256),
# (4096, 16384))
import sys
import torch, torch.nn.functional as F
from triton.testing import do_bench
torch.backends.cuda.matmul.allow_tf32 = False
names = {'bf16': torch.bfloat16, 'fp32': torch.float32}
args = sys.argv[1:]
dts = [names[a] for a in args if a in names] or list(names.values())
comp = '--compile' in args
shapes = [tuple(int(v) for v in a.split(',')) for a in args if a.count(',') == 2]
shapes = shapes or [(16384, 768, 256), (16384, 4096, 256), (16384, 4096, 16384)]
for dt in dts:
    for M, K, N in shapes:
        t = dict(device='cuda', dtype=dt)
        x = torch.randn(M, K, **t); W = torch.randn(N, K, **t) / K**.5
        b = torch.randn(N, **t); g = torch.ones(K, **t); be = torch.zeros(K, **t)
        f = lambda x: F.linear(F.layer_norm(x, (K,), g, be), W, b)
        lin = do_bench(lambda: F.linear(x, W, b), return_mode='median')
        e = do_bench(lambda: f(x), return_mode='median')
        ps = [p.clone().requires_grad_() for p in (x, g, be, W, b)]
        y = F.linear(F.layer_norm(ps[0], (K,), ps[1], ps[2]), ps[3], ps[4])
        dy = torch.randn_like(y)
        bw = do_bench(lambda: torch.autograd.grad(y, ps, dy, retain_graph=True), return_mode='median')
        line = (f"{str(dt)[6:]} M={M} K={K} N={N}: linear {lin*1e3:.1f} us, "
                f"LN+linear eager {e*1e3:.1f} us, autograd bwd {bw*1e3:.1f} us")
        if comp:
            fc = torch.compile(lambda x, g, be, W, b: F.linear(F.layer_norm(x, (K,), g, be), W, b),
                               dynamic=False)
            fc(*ps)  # compile once, with grads
            c = do_bench(lambda: fc(x, g, be, W, b), return_mode='median')
            yc = fc(*ps)
            cb = do_bench(lambda: torch.autograd.grad(yc, ps, dy, retain_graph=True),
                          return_mode='median')
            line += f", compiled {c*1e3:.1f} us, compiled bwd {cb*1e3:.1f} us"
        print(line, flush=True)
