#!/usr/bin/env python3
"""torch_ops.py - fuseprof_torch's operators under PyTorch (a test helper,
run by tests/test-torch-args.sh and tests/test-torch-gpu.sh).

  args   the argument checks: each wrong input raises TypeError or
         ValueError with a message naming the argument (needs torch only;
         the CUDA cases where a GPU is present). Never loads the library.
  grads  LayerNorm+GELU, softmax (plain, scaled, causal), RMSNorm, SwiGLU
         and softplus, forward and
         every gradient, against PyTorch autograd in float64, float32 and
         bfloat16 at awkward shapes; the three modules; torch.compile with
         fullgraph=True over the operators (no graph break) agreeing with
         eager; the autograd.Functions (eager mode) and the custom ops'
         registered autograd (torch.compile's path) agreeing bit for bit.
Exit 0 on success, 1 on a failure, 77 when what it needs is missing."""
import math
import os
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("SKIP: no torch", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "python"))
import fuseprof_torch as fpt  # noqa: E402
from fuseprof_torch import ops  # noqa: E402

failures = 0


def expect(exc, words, fn, *args, **kw):
    global failures
    try:
        fn(*args, **kw)
    except exc as e:
        msg = str(e)
        if all(w in msg for w in words) and "\n" not in msg:
            print(f"ok   {exc.__name__}: {msg}")
            return
        print(f"FAIL {exc.__name__} without {words}: {msg}")
    except Exception as e:  # noqa: BLE001
        print(f"FAIL wanted {exc.__name__}, got {type(e).__name__}: {e}")
    else:
        print(f"FAIL wanted {exc.__name__} {words}, nothing raised")
    failures += 1


def args():
    K, N = 8, 16
    x = torch.randn(4, 4, K)
    g, b = torch.ones(K), torch.zeros(K)
    W, bias = torch.randn(N, K), torch.zeros(N)
    expect(TypeError, ["x", "torch.Tensor"], fpt.ln_linear, [1.0], g, b, W, bias)
    expect(TypeError, ["x", "float64"], fpt.ln_linear, x.double(), g, b, W, bias)
    expect(TypeError, ["weight", "float16"], fpt.ln_linear, x, g, b, W.half(), bias)
    expect(ValueError, ["x", "contiguous"], fpt.ln_linear, x.transpose(0, 1), g, b, W, bias)
    expect(ValueError, ["x", "cpu", "CUDA"], fpt.ln_linear, x, g, b, W, bias)
    expect(ValueError, ["x", "cpu"], fpt.ln_gelu, x, g, b)
    expect(ValueError, ["approximate", "tanh"], fpt.ln_gelu, x, g, b, "sigmoid")
    expect(ValueError, ["x", "cpu"], fpt.softmax, x)
    expect(TypeError, ["x", "int64"], fpt.softmax, torch.ones(3, 3, dtype=torch.int64))
    expect(ValueError, ["x", "cpu"], fpt.rms_norm, x, g)
    expect(TypeError, ["xp", "float16"], fpt.swiglu, x.half())
    expect(ValueError, ["x", "cpu"], fpt.softplus, x)
    expect(TypeError, ["LayerNorm"], fpt.FusedLayerNormLinear.from_modules,
           torch.nn.Linear(K, K), torch.nn.Linear(K, N))
    expect(ValueError, ["eps"], fpt.FusedLayerNormLinear.from_modules,
           torch.nn.LayerNorm(K, eps=1e-6), torch.nn.Linear(K, N))
    expect(ValueError, ["approximate"], fpt.FusedLayerNormGELU, K, "sigmoid")
    # the autograd.Functions check as the functions do (eager mode's path)
    expect(ValueError, ["x", "cpu", "CUDA"], fpt.LayerNormLinearFunction.apply, x, g, b, W,
           bias)
    expect(TypeError, ["x", "float64"], fpt.LayerNormGELUFunction.apply, x.double(), g, b, 0)
    expect(ValueError, ["x", "cpu"], fpt.SoftmaxFunction.apply, x, 1.0, False)
    expect(ValueError, ["x", "cpu"], fpt.RMSNormFunction.apply, x, g)
    expect(ValueError, ["xp", "cpu"], fpt.SwiGLUFunction.apply, x)
    expect(ValueError, ["x", "cpu"], fpt.SoftplusFunction.apply, x)
    expect(ValueError, ["x", "cpu"], fpt.BiasReLUFunction.apply, x, g)
    expect(ValueError, ["x", "cpu"], fpt.BiasDropoutAddFunction.apply, x, g, x, 0.1, 1)
    if not torch.cuda.is_available():
        print("note: no CUDA device: the checks of CUDA tensors skipped")
        return
    c = lambda *ts: [t.cuda() for t in ts]  # noqa: E731
    xc, gc, bc, Wc, biasc = c(x, g, b, W, bias)
    expect(TypeError, ["bias", "bfloat16", "float32"], fpt.ln_linear, xc, gc, bc, Wc,
           biasc.bfloat16())
    expect(ValueError, ["x", "last dimension", "8"], fpt.ln_linear,
           torch.randn(4, 9, device="cuda"), gc, bc, Wc, biasc)
    expect(ValueError, ["gamma", "shape"], fpt.ln_linear, xc, gc[:4].contiguous(), bc, Wc,
           biasc)
    expect(ValueError, ["bias", "shape"], fpt.ln_linear, xc, gc, bc, Wc, biasc[:3].contiguous())
    expect(ValueError, ["weight", "2-D"], fpt.ln_linear, xc, gc, bc, Wc.view(-1), biasc)
    expect(ValueError, ["bias", "cpu"], fpt.ln_linear, xc, gc, bc, Wc, bias)
    expect(ValueError, ["empty"], fpt.ln_linear, torch.empty(0, K, device="cuda"), gc, bc,
           Wc, biasc)
    expect(ValueError, ["causal", "square"], fpt.softmax, xc, 1.0, True)
    expect(ValueError, ["scale"], fpt.softmax, xc, -1.0)
    expect(ValueError, ["gamma", "shape"], fpt.ln_gelu, xc, torch.ones(3, device="cuda"), bc)
    expect(ValueError, ["gamma", "shape"], fpt.rms_norm, xc, torch.ones(3, device="cuda"))
    expect(ValueError, ["xp", "even"], fpt.swiglu, torch.randn(4, 7, device="cuda"))
    expect(ValueError, ["x", "empty"], fpt.softplus, torch.empty(0, device="cuda"))
    expect(ValueError, ["bias", "shape"], fpt.bias_relu, xc, torch.ones(3, device="cuda"))
    expect(ValueError, ["p="], fpt.bias_dropout_add, xc, bc, xc, 1.5)
    expect(ValueError, ["residual", "shape"], fpt.bias_dropout_add, xc, bc,
           torch.ones(3, device="cuda"))
    expect(ValueError, ["seed"], fpt.bias_dropout_add, xc, bc, xc, 0.1, True, -1)


def rel(out, ref):
    d = torch.linalg.vector_norm(out.double() - ref)
    r = torch.linalg.vector_norm(ref)
    return (d / r).item() if r > 0 else d.item()


def compare(name, fn_ours, fn_ref, inputs, dt, tol):
    """Forward and every input gradient of fn_ours in dt against fn_ref in
    float64 on the same rounded inputs."""
    global failures
    ours = [t.detach().to(dt).clone().requires_grad_() for t in inputs]
    ref = [t.detach().to(dt).double().clone().requires_grad_() for t in inputs]
    y = fn_ours(*ours)
    yr = fn_ref(*ref)
    dy = torch.randn_like(yr)
    y.backward(dy.to(dt))
    yr.backward(dy)
    errs = [rel(y.detach(), yr.detach())] + [rel(a.grad, b.grad) for a, b in zip(ours, ref)]
    ok = max(errs) <= tol and all(torch.isfinite(a.grad).all() for a in ours)
    print(f"{'ok  ' if ok else 'FAIL'} {name} {str(dt)[6:]}: forward {errs[0]:.2e}, "
          f"gradients {', '.join(f'{e:.2e}' for e in errs[1:])} (tolerance {tol:g})")
    failures += not ok


def grads():
    global failures
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device", file=sys.stderr)
        sys.exit(77)
    torch.manual_seed(20261126)
    tol = {torch.float32: 1e-5, torch.bfloat16: 2e-2}
    for dt in (torch.float32, torch.bfloat16):
        for lead, n in (((1,), 1), ((3,), 1023), ((2, 5), 768), ((7,), 4096)):
            x = torch.randn(*lead, n, device="cuda") * 2 + 0.5
            g = 1 + 0.1 * torch.randn(n, device="cuda")
            b = 0.1 * torch.randn(n, device="cuda")
            for approx in ("tanh", "none"):
                compare(f"ln_gelu {list(lead) + [n]} {approx}",
                        lambda x, g, b: fpt.ln_gelu(x, g, b, approx),
                        lambda x, g, b: F.gelu(F.layer_norm(x, (n,), g, b, 1e-5),
                                               approximate=approx),
                        [x, g, b], dt, tol[dt])
        for shape, scale, causal in (((1, 1), 1.0, False), ((3, 1023), 1.0, False),
                                     ((2, 3, 64, 64), 0.125, True),
                                     ((5, 4096), 0.5, False), ((1, 1, 1), 1.0, True)):
            x = torch.randn(*shape, device="cuda") * 4

            def ref(x, scale=scale, causal=causal):
                z = x * scale
                if causal:
                    S = x.shape[-1]
                    m = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()
                    z = z.masked_fill(~m, float("-inf"))
                return torch.softmax(z, dim=-1)
            compare(f"softmax {list(shape)} scale {scale} causal {causal}",
                    lambda x, scale=scale, causal=causal: fpt.softmax(x, scale, causal),
                    ref, [x], dt, tol[dt])
    for dt in (torch.float32, torch.bfloat16):
        for lead, n in (((1,), 1), ((3,), 1023), ((2, 5), 768), ((7,), 4096), ((2,), 8)):
            x = torch.randn(*lead, n, device="cuda") * 2 + 0.5
            g = 1 + 0.1 * torch.randn(n, device="cuda")
            # At N = 1, dx = gamma eps / (x^2 + eps)^(3/2) is what is left of
            # two terms of 1/|x| each: a relative norm cannot judge it (the
            # workload's own check, tests/test-workloads, judges it against
            # its terms' size).
            if n > 1:
                compare(f"rms_norm {list(lead) + [n]}", fpt.rms_norm,
                        lambda x, g, n=n: F.rms_norm(x, (n,), g, eps=1e-5), [x, g], dt,
                        tol[dt])
            xp = torch.randn(*lead, 2 * n, device="cuda") * 3
            compare(f"swiglu {list(lead) + [2 * n]}", fpt.swiglu,
                    lambda xp: F.silu(xp.chunk(2, -1)[0]) * xp.chunk(2, -1)[1], [xp], dt,
                    tol[dt])
            compare(f"softplus {list(lead) + [n]}", fpt.softplus,
                    lambda x: torch.logaddexp(x, torch.zeros_like(x)), [x * 10], dt, tol[dt])
    for dt in (torch.float32, torch.bfloat16):
        for lead, n in (((1,), 1), ((3,), 1023), ((2, 5), 768), ((7,), 4096)):
            x = torch.randn(*lead, n, device="cuda")
            b = 0.5 * torch.randn(n, device="cuda")
            compare(f"bias_relu {list(lead) + [n]}", fpt.bias_relu,
                    lambda x, b: torch.relu(x + b), [x, b], dt, tol[dt])
            # dropout: the mask is fuseprof's (Philox), so the reference takes
            # it from the gradient of x (kept / (1 - p), else 0), and the
            # keep rate must sit within 4 sigma of 1 - p
            p = 0.25
            r = torch.randn(*lead, n, device="cuda")
            xs = [t.to(dt).clone().requires_grad_() for t in (x, b, r)]
            y = fpt.bias_dropout_add(*xs, p=p, seed=1234)
            dy = torch.randn_like(y)
            y.backward(dy)
            keep = (xs[0].grad != 0) | (dy == 0)
            x64, b64, r64 = [t.detach().double() for t in xs]
            yref = torch.where(keep, (x64 + b64) / (1 - p), 0.0) + r64
            dxref = torch.where(keep, dy.double() / (1 - p), 0.0)
            errs = [rel(y.detach(), yref), rel(xs[0].grad, dxref),
                    rel(xs[1].grad, dxref.reshape(-1, n).sum(0)), rel(xs[2].grad, dy.double())]
            rate, cnt = keep.double().mean().item(), keep.numel()
            sigma = (p * (1 - p) / cnt) ** 0.5
            ok = max(errs) <= tol[dt] and abs(rate - (1 - p)) <= 4 * sigma + 1e-12
            print(f"{'ok  ' if ok else 'FAIL'} bias_dropout_add {list(lead) + [n]} "
                  f"{str(dt)[6:]}: forward {errs[0]:.2e}, gradients "
                  f"{', '.join(f'{e:.2e}' for e in errs[1:])}, keep rate {rate:.4f}")
            failures += not ok
    # the modules, and torch.compile without a graph break
    ln = torch.nn.LayerNorm(64).cuda()
    lin = torch.nn.Linear(64, 96).cuda()
    m = fpt.FusedLayerNormLinear.from_modules(ln, lin)
    x = torch.randn(10, 64, device="cuda")
    e = rel(m(x).detach(), lin(ln(x)).detach().double())
    ok = e <= 1e-5
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} FusedLayerNormLinear.from_modules: {e:.2e}")
    fg, sm = fpt.FusedLayerNormGELU(96).cuda(), fpt.FusedSoftmax(scale=0.5)

    def f(x):
        return sm(fg(m(x)))
    compiled = torch.compile(f, fullgraph=True)
    a, c = f(x), compiled(x)
    ok = torch.equal(a, c)
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} torch.compile(fullgraph=True) over the three "
          f"modules equals eager: {ok}")
    # eager mode runs the autograd.Functions, torch.compile the custom ops
    # with their registered autograd: the two give the same bits, forward
    # and backward (the same kernels on the same inputs)
    for dt in (torch.float32, torch.bfloat16):
        K, N = 320, 200
        xe = torch.randn(3, 7, K, device="cuda", dtype=dt)
        ge = 1 + 0.1 * torch.randn(K, device="cuda", dtype=dt)
        be = 0.1 * torch.randn(K, device="cuda", dtype=dt)
        We = torch.randn(N, K, device="cuda", dtype=dt) / 16
        biase = torch.randn(N, device="cuda", dtype=dt)
        Se = torch.randn(2, 3, 33, 33, device="cuda", dtype=dt)
        cases = [("ln_linear", fpt.ln_linear, torch.ops.fuseprof.ln_linear,
                  (xe, ge, be, We, biase), ()),
                 ("ln_gelu", lambda *a: fpt.ln_gelu(*a, "none"), torch.ops.fuseprof.ln_gelu,
                  (xe, ge, be), (1,)),
                 ("softmax", lambda s: fpt.softmax(s, 0.25, True),
                  torch.ops.fuseprof.softmax, (Se,), (0.25, True)),
                 ("rms_norm", fpt.rms_norm, torch.ops.fuseprof.rms_norm, (xe, ge), ()),
                 ("swiglu", fpt.swiglu, torch.ops.fuseprof.swiglu, (xe,), ()),
                 ("softplus", fpt.softplus, torch.ops.fuseprof.softplus, (xe,), ()),
                 ("bias_relu", fpt.bias_relu, lambda *a: torch.ops.fuseprof.bias_relu(*a)[0],
                  (xe, ge), ()),
                 ("bias_dropout_add", lambda *a: fpt.bias_dropout_add(*a, p=0.3, seed=99),
                  torch.ops.fuseprof.bias_dropout_add, (xe, ge, xe), (0.3, 99))]
        for name, eager, op, ins, extra in cases:
            outs = []
            for f, more in ((eager, ()), (op, extra)):
                leaves = [t.clone().requires_grad_() for t in ins]
                y = f(*leaves, *more)
                y.backward(torch.ones_like(y) * 0.5 + torch.arange(y.shape[-1],
                           device="cuda", dtype=dt) / y.shape[-1])
                outs.append([y.detach()] + [t.grad for t in leaves])
            ok = all(torch.equal(a, c) for a, c in zip(*outs))
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name} {str(dt)[6:]}: the autograd.Function "
                  f"(eager) and the custom op's autograd give the same bits: {ok}")
    # the fold cache follows an in-place weight update (an optimizer step)
    y0 = m(x).detach().clone()
    with torch.no_grad():
        m.weight.mul_(2)
        m.bias.mul_(2)
    y1 = m(x).detach()
    e = rel(y1, 2 * y0.double())
    ok = e <= 1e-5
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} the fold is redone after an in-place weight "
          f"update: {e:.2e}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "args"
    {"args": args, "grads": grads}[what]()
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)
