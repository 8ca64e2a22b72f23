# ranks-torch.py - a two-rank PyTorch program for tests/test-multi-gpu.sh,
# started by torchrun (RANK, LOCAL_RANK, WORLD_SIZE): each rank on GPU
# LOCAL_RANK runs eight steps, each an NVTX range "step" holding "matmul"
# and "norm"; rank 1 multiplies matrices twice the size of rank 0's, so
# rank 1 is the straggler of step/matmul by about eight times the FLOPs.
# No process group: the profile needs no communication.
import os

import torch

rank = int(os.environ["RANK"])
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
n = 2048 * (2 if rank == 1 else 1)
a = torch.randn(n, n, device="cuda")
b = torch.randn(n, n, device="cuda")
ln = torch.nn.LayerNorm(n).cuda()
for _ in range(8):
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_push("matmul")
    c = a @ b
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("norm")
    d = ln(c)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("rank", rank, "ok", bool(torch.isfinite(d).all()))
