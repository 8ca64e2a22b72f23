# ln_linear/torch-baseline.py - what a user would run instead: PyTorch eager LayerNorm+Linear,
# the Linear alone (cuBLAS) and the autograd backward, timed with triton do_bench
# (median), at the ln_linear suite shapes.
# Usage on a GPU machine: python3 kernels/ln_linear/torch-baseline.py [bf16|fp32]... (default both)
import sys
import torch, torch.nn.functional as F
from triton.testing import do_bench
torch.backends.cuda.matmul.allow_tf32 = False
names = {'bf16': torch.bfloat16, 'fp32': torch.float32}
M = 16384
for dt in [names[a] for a in sys.argv[1:]] or names.values():
    for K, N in ((768, 256), (4096, 256), (4096, 16384)):
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
        print(f"{str(dt)[6:]} M={M} K={K} N={N}: linear {lin*1e3:.1f} us, LN+linear eager {e*1e3:.1f} us, autograd bwd {bw*1e3:.1f} us", flush=True)
