# profile-torch.py - a PyTorch program for tests/test-profile-gpu.sh:
# LayerNorm, then GELU, each in an NVTX range inside a range "step", five
# steps. fuseprof profile must find the LayerNorm kernels in
# step/LayerNorm and the GELU kernels in step/gelu.
import torch

x = torch.randn(4096, 1024, device="cuda")
ln = torch.nn.LayerNorm(1024).cuda()
for _ in range(5):
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_push("LayerNorm")
    y = ln(x)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("gelu")
    z = torch.nn.functional.gelu(y)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("ok", float(z.sum()) != 0.0)
