#!/usr/bin/env python3
"""train_block.py - a small pre-LayerNorm transformer block trained on
synthetic data twice from the same seed: with fuseprof's fused modules
(FusedLayerNormLinear for the QKV and MLP-in projections, FusedSoftmax for
the causal attention, FusedLayerNormGELU before the read-out) and with plain
PyTorch (eager, and torch.compile with --compile). Prints the two loss
curves, their largest relative difference, and the time per step of each.

The fused model starts from a copy of the plain model's parameters, so the
curves differ only by rounding: within --tol (relative; default 1e-2 for
float32, 5e-2 for bfloat16) at every logged step, or the exit status is 1.
Each step runs in NVTX ranges: the model's name ("fused", "eager",
"compiled"), inside it "forward" (with "attention", "mlp" and "head" in
eager mode; a compiled graph gets none, so as not to break it),
"backward" and "optimizer", so that

    fuseprof profile --tag block -- python3 python/examples/train_block.py --steps 40

shows each part's kernels, fused beside eager, as ops named by range
(fused/forward/attention, eager/backward, ...). With --only NAME one model
trains, under the range "block", and --coarse leaves out the forward's
parts: two such profiles (eager, compiled) compare range by range:

    fuseprof profile --tag eager -- python3 train_block.py --only eager --coarse
    fuseprof profile --tag compiled -- python3 train_block.py --only compiled --coarse
    fuseprof compare eager compiled

    python3 python/examples/train_block.py --steps 200 --dtype bf16 --compile
"""
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import fuseprof_torch as fpt  # noqa: E402


class Block(nn.Module):
    """x + attn(LN(x)); x + MLP(LN(x)); read-out Linear(GELU(LN(x)))."""

    def __init__(self, d, heads, fused):
        super().__init__()
        self.d, self.h, self.fused = d, heads, fused
        self.coarse = False
        self.ln1, self.qkv = nn.LayerNorm(d), nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2, self.fc = nn.LayerNorm(d), nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.ln3, self.out = nn.LayerNorm(d), nn.Linear(d, d)

    def fuse(self):
        """Replace LN+Linear pairs, the softmax and LN+GELU by fuseprof's."""
        self.qkv_f = fpt.FusedLayerNormLinear.from_modules(self.ln1, self.qkv)
        self.fc_f = fpt.FusedLayerNormLinear.from_modules(self.ln2, self.fc)
        self.head_f = fpt.FusedLayerNormGELU(self.d, approximate="tanh",
                                             device=self.ln3.weight.device,
                                             dtype=self.ln3.weight.dtype)
        with torch.no_grad():
            self.head_f.weight.copy_(self.ln3.weight)
            self.head_f.bias.copy_(self.ln3.bias)
        self.softmax_f = fpt.FusedSoftmax(scale=1.0 / math.sqrt(self.d // self.h),
                                          causal=True)
        del self.ln1, self.qkv, self.ln2, self.fc, self.ln3
        self.fused = True
        return self

    def forward(self, x):
        B, S, d = x.shape
        nvtx = _Ranges() if _compiling() or self.coarse else torch.cuda.nvtx
        nvtx.range_push("attention")
        qkv = self.qkv_f(x) if self.fused else self.qkv(self.ln1(x))
        q, k, v = qkv.view(B, S, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2)
        if self.fused:
            p = self.softmax_f(scores.contiguous())
        else:
            mask = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
            p = torch.softmax(scores.masked_fill(~mask, float("-inf")) /
                              math.sqrt(d // self.h), dim=-1)
        a = (p @ v).transpose(1, 2).reshape(B, S, d)
        x = x + self.proj(a)
        nvtx.range_pop()
        nvtx.range_push("mlp")
        h = self.fc_f(x) if self.fused else self.fc(self.ln2(x))
        x = x + self.fc2(F.gelu(h, approximate="tanh"))
        nvtx.range_pop()
        nvtx.range_push("head")
        g = self.head_f(x) if self.fused else F.gelu(self.ln3(x), approximate="tanh")
        y = self.out(g)
        nvtx.range_pop()
        return y


def _compiling():
    f = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return f() if f is not None else False


class _Ranges:
    """No ranges (inside a compiled graph)."""

    def range_push(self, name):
        pass

    def range_pop(self):
        pass


def train(model, data, steps, lr, name):
    """Losses and the median time of a step over the second half. The
    backward's range is the main thread's: autograd launches the kernels
    from a thread of its own, which fuseprof profile places in the range
    the main thread has open."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    nvtx = torch.cuda.nvtx
    losses = []
    torch.cuda.synchronize()
    times = []
    for i in range(steps):
        x, t = data[i % len(data)]
        t0 = time.perf_counter()
        nvtx.range_push(name)
        nvtx.range_push("forward")
        loss = F.mse_loss(model(x).float(), t.float())
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()
        nvtx.range_pop()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    # the first steps compile and warm up: time the second half (its
    # median: a step now and then waits on the host)
    half = sorted(times[len(times) // 2:])
    return losses, half[len(half) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--compile", action="store_true",
                    help="also train the plain model under torch.compile")
    ap.add_argument("--tol", type=float, default=None)
    ap.add_argument("--only", choices=["fused", "eager", "compiled"],
                    help="train this model alone, in NVTX ranges under 'block' "
                         "(no loss comparison)")
    ap.add_argument("--coarse", action="store_true",
                    help="no ranges for the forward's parts (attention, mlp, head)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("train_block: no CUDA device", file=sys.stderr)
        return 77
    if a.steps < 2 or a.width % a.heads:
        ap.error("--steps must be >= 2 and --width a multiple of --heads")
    dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[a.dtype]
    tol = a.tol if a.tol is not None else (1e-2 if dt == torch.float32 else 5e-2)
    torch.manual_seed(0)
    gen = torch.Generator(device="cuda").manual_seed(1)
    data = []
    for _ in range(8):
        x = torch.randn(a.batch, a.seq, a.width, device="cuda", generator=gen).to(dt)
        data.append((x, torch.tanh(x.roll(1, dims=-1)) * 0.5))
    plain = Block(a.width, a.heads, False).cuda().to(dt)
    state = {k: v.clone() for k, v in plain.state_dict().items()}
    fused = Block(a.width, a.heads, False).cuda().to(dt)
    fused.load_state_dict(state)
    fused.fuse()

    fused.coarse = plain.coarse = a.coarse
    runs = [("fused", fused), ("eager", plain)]
    if a.compile or a.only == "compiled":
        comp = Block(a.width, a.heads, False).cuda().to(dt)
        comp.load_state_dict(state)
        runs.append(("compiled", torch.compile(comp)))
    if a.only:
        name, m = next(r for r in runs if r[0] == a.only)
        losses, t = train(m, data, a.steps, a.lr, "block")
        print(f"block d={a.width} heads={a.heads} batch={a.batch} seq={a.seq} "
              f"{a.dtype}, {a.steps} steps of AdamW, {name} alone: loss {losses[0]:.6f} -> "
              f"{losses[-1]:.6f}; time a step {t * 1e3:.2f} ms (median of the second half)")
        return 0 if all(math.isfinite(v) for v in losses) else 1
    res = {name: train(m, data, a.steps, a.lr, name) for name, m in runs}
    f, e = res["fused"][0], res["eager"][0]
    worst = max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(f, e))
    log = sorted({0, a.steps - 1} | set(range(0, a.steps, max(1, a.steps // 8))))
    print(f"block d={a.width} heads={a.heads} batch={a.batch} seq={a.seq} "
          f"{a.dtype}, {a.steps} steps of AdamW")
    print("step   " + "".join(f"{n:>14}" for n, _ in runs))
    for i in log:
        print(f"{i + 1:<6} " + "".join(f"{res[n][0][i]:14.6f}" for n, _ in runs))
    print("time a step (ms, median of the second half): " +
          ", ".join(f"{n} {res[n][1] * 1e3:.2f}" for n, _ in runs))
    ok = worst <= tol and all(math.isfinite(v) for v in f)
    print(f"loss curves, fused against eager: largest relative difference {worst:.3e} "
          f"(tolerance {tol:g}): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
