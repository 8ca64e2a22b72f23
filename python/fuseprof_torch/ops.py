"""fuseprof's fused kernels as PyTorch custom operators.

Each operator is a torch.library custom op (namespace "fuseprof"), so that
autograd, torch.compile (an opaque node, no graph break: each op has a fake
implementation for shapes) and the dispatcher treat it as one of their own,
and its implementation calls libfuseprof-kernels through ctypes on the
current CUDA stream. Why ctypes and torch.library rather than a C++
extension: nothing here is compiled against PyTorch's C++ ABI, so one build
of the library serves every PyTorch version that has torch.library's
custom_op (2.4 and later) and no compiler is needed at import time.

Each operator also has a torch.autograd.Function (LayerNormLinearFunction
and so on) over the same implementation, and the public functions take
that path in eager mode: a custom op's dispatch and its registered autograd
cost about 20 us of host time per call forward and several times that
backward (measured on an H100 machine; bench/RESULTS.md), which at a small
transformer block's shapes is more than the kernels take. Under
torch.compile (torch.compiler.is_compiling()) they call the custom ops,
which the compiler treats as opaque nodes.

The public functions (ln_linear, ln_gelu, softmax) check their arguments
first and raise TypeError (not a tensor, a dtype other than float32 or
bfloat16, dtypes that differ) or ValueError (a CPU tensor or tensors on
different devices, non-contiguous, shapes that do not fit), naming the
argument.
"""
import ctypes
from typing import Tuple

import torch
from torch import Tensor

from . import _lib

_DT = {torch.float32: _lib.FPK_F32, torch.bfloat16: _lib.FPK_BF16}
_P = ctypes.c_void_p
_L = ctypes.c_long
_S = ctypes.c_size_t
_I = ctypes.c_int
_F = ctypes.c_float

# The C entry points used here, as fuseprof/kernels.h declares them.
_lib.SIGNATURES.update({
    "fpk_ln_linear_folded_bytes": (_S, [_L, _L, _I]),
    "fpk_ln_linear_fold": (_I, [_P, _P, _P, _P, _L, _L, _I, _P, _S, _P]),
    "fpk_ln_linear_fwd_workspace": (_S, [_L, _L, _L, _I]),
    "fpk_ln_linear_fwd": (_I, [_P, _P, _P, _L, _L, _L, _I, _P, _S, _P]),
    "fpk_ln_linear_bwd_workspace": (_S, [_L, _L, _L, _I]),
    "fpk_ln_linear_bwd": (_I, [_P, _P, _P, _P, _P, _P, _P, _P, _P, _P,
                               _L, _L, _L, _I, _P, _S, _P]),
    "fpk_ln_gelu_fwd": (_I, [_P, _P, _P, _P, _L, _L, _I, _I, _P]),
    "fpk_ln_gelu_bwd_workspace": (_S, [_L, _L, _I]),
    "fpk_ln_gelu_bwd": (_I, [_P, _P, _P, _P, _P, _P, _P, _L, _L, _I, _I,
                             _P, _S, _P]),
    "fpk_softmax_fwd": (_I, [_P, _P, _L, _L, _F, _I, _I, _P]),
    "fpk_softmax_bwd": (_I, [_P, _P, _P, _L, _L, _I, _P]),
    "fpk_rmsnorm_fwd": (_I, [_P, _P, _P, _L, _L, _I, _P]),
    "fpk_rmsnorm_bwd_workspace": (_S, [_L, _L, _I]),
    "fpk_rmsnorm_bwd": (_I, [_P, _P, _P, _P, _P, _L, _L, _I, _P, _S, _P]),
    "fpk_swiglu_fwd": (_I, [_P, _P, _L, _L, _I, _P]),
    "fpk_swiglu_bwd": (_I, [_P, _P, _P, _L, _L, _I, _P]),
    "fpk_softplus_fwd": (_I, [_P, _P, _S, _I, _P]),
    "fpk_softplus_bwd": (_I, [_P, _P, _P, _S, _I, _P]),
    "fpk_bias_relu_mask_bytes": (_S, [_L, _L]),
    "fpk_bias_relu_fwd": (_I, [_P, _P, _P, _P, _L, _L, _I, _P]),
    "fpk_bias_relu_bwd_workspace": (_S, [_L, _L, _I]),
    "fpk_bias_relu_bwd": (_I, [_P, _P, _P, _P, _L, _L, _I, _P, _S, _P]),
    "fpk_bias_dropout_add_fwd": (_I, [_P, _P, _P, _P, _L, _L, _F, ctypes.c_ulonglong, _I,
                                      _P]),
    "fpk_bias_dropout_add_bwd_workspace": (_S, [_L, _L, _I]),
    "fpk_bias_dropout_add_bwd": (_I, [_P, _P, _P, _L, _L, _F, ctypes.c_ulonglong, _I, _P,
                                      _S, _P]),
})


def _ptr(t):
    # ctypes turns an int into the void * the signature declares
    return t.data_ptr() if t is not None else None


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(t):
    """The current stream of t's device, as an int (cudaStream_t)."""
    if _raw_stream is not None:
        return _raw_stream(t.device.index)
    return torch.cuda.current_stream(t.device).cuda_stream


def _compiling():
    """True while torch.compile traces the caller."""
    f = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    if f is None:
        f = getattr(getattr(torch, "_dynamo", None), "is_compiling", lambda: False)
    return f()


# The library's size queries (workspace, mask bytes) by arguments: pure
# functions of them, asked once per shape; those that also depend on the
# current device (the LayerNorm+Linear forward's split-K partials follow
# its multiprocessor count) name it as dev.
_SIZES = {}


def _size(name, *args, dev=None):
    key = (name, dev) + args
    n = _SIZES.get(key)
    if n is None:
        n = _lib.size(name, *args)
        if len(_SIZES) >= 4096:
            _SIZES.clear()
        _SIZES[key] = n
    return n


class _on:
    """The device of tensor t made current for the call (PyTorch's
    current-device context only where it differs: entering it costs host
    time on every call)."""

    def __init__(self, t):
        self.ctx = None
        if t.device.index is not None and t.device.index != torch.cuda.current_device():
            self.ctx = torch.cuda.device(t.device)

    def __enter__(self):
        if self.ctx is not None:
            self.ctx.__enter__()

    def __exit__(self, *exc):
        if self.ctx is not None:
            self.ctx.__exit__(*exc)


def _workspace(nbytes, like):
    """A workspace of nbytes on like's device; None (a null pointer, which
    the library takes for a workspace of 0 bytes) when nothing is needed."""
    if not nbytes:
        return None
    return torch.empty(nbytes, dtype=torch.uint8, device=like.device)


def _nbytes(ws):
    return ws.numel() if ws is not None else 0


# ---------------------------------------------------------------------------
# Argument checks


def _fine(tensors, dtype):
    """The common case at the cost of one pass: every argument a contiguous
    CUDA tensor of one dtype fuseprof takes, on one device."""
    t0 = tensors[0][1]
    if not isinstance(t0, torch.Tensor):
        return False
    dt, dev = t0.dtype, t0.device
    if dt not in _DT or dev.type != "cuda" or (dtype is not None and dt != dtype):
        return False
    for _, t in tensors:
        if (not isinstance(t, torch.Tensor) or t.dtype != dt or t.device != dev
                or not t.is_contiguous()):
            return False
    return True


def _check(fn, tensors, dtype=None):
    """Every (argument name, value) in tensors: a contiguous CUDA tensor of
    float32 or bfloat16, all of one dtype (dtype, when given) and one
    device. Types and dtypes are checked first (TypeError), then layout and
    devices (ValueError), each over all the arguments in order, so that the
    error names the first argument of the first kind of fault."""
    if _fine(tensors, dtype):
        return
    for arg, t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{fn}: {arg} must be a torch.Tensor, not {type(t).__name__}")
        if t.dtype not in _DT:
            raise TypeError(f"{fn}: {arg} has dtype {t.dtype}; fuseprof's kernels "
                            "take torch.float32 or torch.bfloat16")
    a0, t0 = tensors[0]
    if dtype is not None and t0.dtype != dtype:
        raise TypeError(f"{fn}: {a0} has dtype {t0.dtype}, expected {dtype}")
    for arg, t in tensors[1:]:
        if t.dtype != t0.dtype:
            raise TypeError(f"{fn}: {arg} has dtype {t.dtype} but {a0} has {t0.dtype}; "
                            "all tensors must share one dtype")
    for arg, t in tensors:
        if not t.is_contiguous():
            raise ValueError(f"{fn}: {arg} is not contiguous (strides {t.stride()} "
                             f"for shape {tuple(t.shape)}); call .contiguous() first")
    for arg, t in tensors:
        if t.device.type != "cuda":
            raise ValueError(f"{fn}: {arg} is on {t.device}; fuseprof's kernels take "
                             "CUDA tensors (move it with .cuda())")
        if t.device != t0.device:
            raise ValueError(f"{fn}: {arg} is on {t.device} but {a0} is on "
                             f"{t0.device}; all tensors must be on one device")


def _shape(fn, arg, t, want):
    if tuple(t.shape) != tuple(want):
        raise ValueError(f"{fn}: {arg} has shape {tuple(t.shape)}, expected {tuple(want)}")


def _rows(fn, x, width_name):
    if x.dim() < 1 or x.shape[-1] < 1:
        raise ValueError(f"{fn}: x must have a last dimension ({width_name}) of at "
                         f"least 1, got shape {tuple(x.shape)}")
    return x.numel() // x.shape[-1], x.shape[-1]


# ---------------------------------------------------------------------------
# LayerNorm + Linear: y = LayerNorm(x; gamma, beta) W^T + b

# The fold (W' = W o gamma, s, b') per weight version: keyed by the
# parameters' storage and version counters, which in-place updates (an
# optimizer step) advance, so a cached fold is never stale. A few entries:
# one per module in use.
_FOLD_CACHE = {}
_FOLD_CACHE_MAX = 64


def _fold_key(gamma, beta, weight, bias):
    # Addresses are unique across devices; the shapes of gamma, beta and
    # bias follow from weight's (the arguments were checked against it).
    return (gamma.data_ptr(), gamma._version, beta.data_ptr(), beta._version,
            weight.data_ptr(), weight._version, bias.data_ptr(), bias._version,
            weight.shape, weight.dtype)


def _folded(gamma, beta, weight, bias):
    key = _fold_key(gamma, beta, weight, bias)
    hit = _FOLD_CACHE.get(key)
    if hit is not None:
        return hit
    N, K = weight.shape
    dt = _DT[weight.dtype]
    nbytes = _size("fpk_ln_linear_folded_bytes", K, N, dt)
    buf = torch.empty(nbytes, dtype=torch.uint8, device=weight.device)
    _lib.call("fpk_ln_linear_fold", _ptr(gamma), _ptr(beta), _ptr(weight), _ptr(bias),
              K, N, dt, _ptr(buf), nbytes, _stream(weight))
    if len(_FOLD_CACHE) >= _FOLD_CACHE_MAX:
        _FOLD_CACHE.pop(next(iter(_FOLD_CACHE)))
    # the buffer is kept with the tensors it came from, so that their
    # storage (and with it the key's data_ptr) cannot be reused while the
    # entry lives
    _FOLD_CACHE[key] = (buf, (gamma, beta, weight, bias))
    return _FOLD_CACHE[key]


def _ln_linear_impl(x, gamma, beta, weight, bias):
    N, K = weight.shape
    M = x.numel() // K
    y = x.new_empty(x.shape[:-1] + (N,))
    with _on(x):
        buf, _ = _folded(gamma, beta, weight, bias)
        dt = _DT[x.dtype]
        ws = _workspace(_size("fpk_ln_linear_fwd_workspace", M, K, N, dt,
                              dev=x.device.index), x)
        _lib.call("fpk_ln_linear_fwd", _ptr(x), _ptr(buf), _ptr(y), M, K, N, dt,
                  _ptr(ws), _nbytes(ws), _stream(x))
    return y


@torch.library.custom_op("fuseprof::ln_linear", mutates_args=())
def _ln_linear(x: Tensor, gamma: Tensor, beta: Tensor, weight: Tensor,
               bias: Tensor) -> Tensor:
    return _ln_linear_impl(x, gamma, beta, weight, bias)


@_ln_linear.register_fake
def _(x, gamma, beta, weight, bias):
    return x.new_empty(x.shape[:-1] + (weight.shape[0],))


def _ln_linear_backward_impl(dy, x, gamma, beta, weight):
    N, K = weight.shape
    M = x.numel() // K
    dx = torch.empty_like(x)
    dgamma = torch.empty_like(gamma)
    dbeta = torch.empty_like(beta)
    dW = torch.empty_like(weight)
    db = weight.new_empty((N,))
    with _on(x):
        dt = _DT[x.dtype]
        ws = _workspace(_size("fpk_ln_linear_bwd_workspace", M, K, N, dt), x)
        _lib.call("fpk_ln_linear_bwd", _ptr(dy), _ptr(x), _ptr(gamma), _ptr(beta),
                  _ptr(weight), _ptr(dx), _ptr(dgamma), _ptr(dbeta), _ptr(dW), _ptr(db),
                  M, K, N, dt, _ptr(ws), _nbytes(ws), _stream(x))
    return dx, dgamma, dbeta, dW, db


@torch.library.custom_op("fuseprof::ln_linear_backward", mutates_args=())
def _ln_linear_backward(dy: Tensor, x: Tensor, gamma: Tensor, beta: Tensor,
                        weight: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    return _ln_linear_backward_impl(dy, x, gamma, beta, weight)


@_ln_linear_backward.register_fake
def _(dy, x, gamma, beta, weight):
    return (torch.empty_like(x), torch.empty_like(gamma), torch.empty_like(beta),
            torch.empty_like(weight), weight.new_empty((weight.shape[0],)))


def _ln_linear_setup(ctx, inputs, output):
    x, gamma, beta, weight, bias = inputs
    ctx.save_for_backward(x, gamma, beta, weight)


def _ln_linear_grad(ctx, dy):
    x, gamma, beta, weight = ctx.saved_tensors
    dx, dgamma, dbeta, dW, db = _ln_linear_backward(dy.contiguous(), x, gamma, beta, weight)
    return dx, dgamma, dbeta, dW, db


_ln_linear.register_autograd(_ln_linear_grad, setup_context=_ln_linear_setup)


def _ln_linear_args(x, gamma, beta, weight, bias):
    fn = "fuseprof_torch.ln_linear"
    _check(fn, [("x", x), ("gamma", gamma), ("beta", beta), ("weight", weight),
                    ("bias", bias)])
    if weight.dim() != 2:
        raise ValueError(f"{fn}: weight must be 2-D [N, K], got shape {tuple(weight.shape)}")
    N, K = weight.shape
    if x.dim() < 1 or x.shape[-1] != K:
        raise ValueError(f"{fn}: x has shape {tuple(x.shape)}; its last dimension must "
                         f"be weight's K = {K}")
    if x.numel() == 0:
        raise ValueError(f"{fn}: x is empty (shape {tuple(x.shape)})")
    _shape(fn, "gamma", gamma, (K,))
    _shape(fn, "beta", beta, (K,))
    _shape(fn, "bias", bias, (N,))


class LayerNormLinearFunction(torch.autograd.Function):
    """LayerNorm + Linear with fuseprof's fused forward and backward:
    LayerNormLinearFunction.apply(x, gamma, beta, weight, bias), the
    arguments as ln_linear() takes them (it calls this in eager mode)."""

    @staticmethod
    def forward(ctx, x, gamma, beta, weight, bias):
        _ln_linear_args(x, gamma, beta, weight, bias)
        ctx.save_for_backward(x, gamma, beta, weight)
        return _ln_linear_impl(x, gamma, beta, weight, bias)

    @staticmethod
    def backward(ctx, dy):
        x, gamma, beta, weight = ctx.saved_tensors
        return _ln_linear_backward_impl(dy.contiguous(), x, gamma, beta, weight)


def ln_linear(x, gamma, beta, weight, bias):
    """y = LayerNorm(x; gamma, beta, eps=1e-5) @ weight.T + bias in one fused
    kernel (the backward in fuseprof's fused backward kernels).

    x: [..., K]; gamma, beta: [K]; weight: [N, K] (as nn.Linear keeps it);
    bias: [N]; all contiguous CUDA tensors of one dtype, float32 or bfloat16
    (bf16 storage, fp32 math). Returns y: [..., N]. The LayerNorm's affine
    part is folded into the weight once per version of the parameters and
    cached."""
    if _compiling():
        _ln_linear_args(x, gamma, beta, weight, bias)
        return _ln_linear(x, gamma, beta, weight, bias)
    return LayerNormLinearFunction.apply(x, gamma, beta, weight, bias)


# ---------------------------------------------------------------------------
# LayerNorm + GELU: y = GELU(LayerNorm(x; gamma, beta))

_APPROX = {"tanh": 0, "none": 1}


def _ln_gelu_impl(x, gamma, beta, erf):
    M, N = x.numel() // x.shape[-1], x.shape[-1]
    y = torch.empty_like(x)
    with _on(x):
        _lib.call("fpk_ln_gelu_fwd", _ptr(x), _ptr(gamma), _ptr(beta), _ptr(y), M, N,
                  erf, _DT[x.dtype], _stream(x))
    return y


@torch.library.custom_op("fuseprof::ln_gelu", mutates_args=())
def _ln_gelu(x: Tensor, gamma: Tensor, beta: Tensor, erf: int) -> Tensor:
    return _ln_gelu_impl(x, gamma, beta, erf)


@_ln_gelu.register_fake
def _(x, gamma, beta, erf):
    return torch.empty_like(x)


def _ln_gelu_backward_impl(dy, x, gamma, beta, erf):
    M, N = x.numel() // x.shape[-1], x.shape[-1]
    dx = torch.empty_like(x)
    dgamma = torch.empty_like(gamma)
    dbeta = torch.empty_like(beta)
    with _on(x):
        dt = _DT[x.dtype]
        ws = _workspace(_size("fpk_ln_gelu_bwd_workspace", M, N, dt), x)
        _lib.call("fpk_ln_gelu_bwd", _ptr(dy), _ptr(x), _ptr(gamma), _ptr(beta), _ptr(dx),
                  _ptr(dgamma), _ptr(dbeta), M, N, erf, dt, _ptr(ws), _nbytes(ws),
                  _stream(x))
    return dx, dgamma, dbeta


@torch.library.custom_op("fuseprof::ln_gelu_backward", mutates_args=())
def _ln_gelu_backward(dy: Tensor, x: Tensor, gamma: Tensor, beta: Tensor,
                      erf: int) -> Tuple[Tensor, Tensor, Tensor]:
    return _ln_gelu_backward_impl(dy, x, gamma, beta, erf)


@_ln_gelu_backward.register_fake
def _(dy, x, gamma, beta, erf):
    return torch.empty_like(x), torch.empty_like(gamma), torch.empty_like(beta)


def _ln_gelu_setup(ctx, inputs, output):
    x, gamma, beta, erf = inputs
    ctx.save_for_backward(x, gamma, beta)
    ctx.erf = erf


def _ln_gelu_grad(ctx, dy):
    x, gamma, beta = ctx.saved_tensors
    dx, dgamma, dbeta = _ln_gelu_backward(dy.contiguous(), x, gamma, beta, ctx.erf)
    return dx, dgamma, dbeta, None


_ln_gelu.register_autograd(_ln_gelu_grad, setup_context=_ln_gelu_setup)


def _ln_gelu_args(x, gamma, beta):
    fn = "fuseprof_torch.ln_gelu"
    _check(fn, [("x", x), ("gamma", gamma), ("beta", beta)])
    M, N = _rows(fn, x, "the normalised width")
    if x.numel() == 0:
        raise ValueError(f"{fn}: x is empty (shape {tuple(x.shape)})")
    _shape(fn, "gamma", gamma, (N,))
    _shape(fn, "beta", beta, (N,))


class LayerNormGELUFunction(torch.autograd.Function):
    """LayerNorm + GELU with fuseprof's fused forward and backward:
    LayerNormGELUFunction.apply(x, gamma, beta, erf), erf 0 for GELU's tanh
    form and 1 for the exact one (ln_gelu() calls it in eager mode)."""

    @staticmethod
    def forward(ctx, x, gamma, beta, erf):
        _ln_gelu_args(x, gamma, beta)
        if erf not in (0, 1):
            raise ValueError(f"LayerNormGELUFunction: erf={erf!r}; it takes 0 (tanh) or 1")
        ctx.save_for_backward(x, gamma, beta)
        ctx.erf = erf
        return _ln_gelu_impl(x, gamma, beta, erf)

    @staticmethod
    def backward(ctx, dy):
        x, gamma, beta = ctx.saved_tensors
        dx, dgamma, dbeta = _ln_gelu_backward_impl(dy.contiguous(), x, gamma, beta, ctx.erf)
        return dx, dgamma, dbeta, None


def ln_gelu(x, gamma, beta, approximate="tanh"):
    """y = GELU(LayerNorm(x; gamma, beta, eps=1e-5)) over x's last dimension,
    in one kernel. approximate: "tanh" (GELU's tanh form) or "none" (exact,
    erf), as torch.nn.functional.gelu takes it. x: [..., N]; gamma, beta:
    [N]; contiguous CUDA tensors of one dtype, float32 or bfloat16."""
    if approximate not in _APPROX:
        raise ValueError(f"fuseprof_torch.ln_gelu: approximate={approximate!r}; it takes "
                         "'tanh' or 'none'")
    if _compiling():
        _ln_gelu_args(x, gamma, beta)
        return _ln_gelu(x, gamma, beta, _APPROX[approximate])
    return LayerNormGELUFunction.apply(x, gamma, beta, _APPROX[approximate])


# ---------------------------------------------------------------------------
# Softmax over the last dimension: y = softmax(x * scale), optionally causal


def _softmax_impl(x, scale, causal):
    M, N = x.numel() // x.shape[-1], x.shape[-1]
    y = torch.empty_like(x)
    with _on(x):
        _lib.call("fpk_softmax_fwd", _ptr(x), _ptr(y), M, N, scale, int(causal),
                  _DT[x.dtype], _stream(x))
    return y


@torch.library.custom_op("fuseprof::softmax", mutates_args=())
def _softmax(x: Tensor, scale: float, causal: bool) -> Tensor:
    return _softmax_impl(x, scale, causal)


@_softmax.register_fake
def _(x, scale, causal):
    return torch.empty_like(x)


def _softmax_backward_impl(y, dy):
    M, N = y.numel() // y.shape[-1], y.shape[-1]
    dx = torch.empty_like(y)
    with _on(y):
        _lib.call("fpk_softmax_bwd", _ptr(y), _ptr(dy), _ptr(dx), M, N, _DT[y.dtype],
                  _stream(y))
    return dx


@torch.library.custom_op("fuseprof::softmax_backward", mutates_args=())
def _softmax_backward(y: Tensor, dy: Tensor) -> Tensor:
    return _softmax_backward_impl(y, dy)


@_softmax_backward.register_fake
def _(y, dy):
    return torch.empty_like(y)


def _softmax_setup(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.scale = inputs[1]


def _softmax_grad(ctx, dy):
    (y,) = ctx.saved_tensors
    dx = _softmax_backward(y, dy.contiguous())
    if ctx.scale != 1.0:
        dx = dx * ctx.scale
    return dx, None, None


_softmax.register_autograd(_softmax_grad, setup_context=_softmax_setup)


def _softmax_args(x, scale, causal):
    fn = "fuseprof_torch.softmax"
    _check(fn, [("x", x)])
    _rows(fn, x, "the row width")
    if x.numel() == 0:
        raise ValueError(f"{fn}: x is empty (shape {tuple(x.shape)})")
    if causal and (x.dim() < 2 or x.shape[-2] != x.shape[-1]):
        raise ValueError(f"{fn}: causal=True takes square [..., S, S] scores, got "
                         f"shape {tuple(x.shape)}")
    if not isinstance(scale, (int, float)) or not scale > 0:
        raise ValueError(f"{fn}: scale={scale!r} must be a positive number")


class SoftmaxFunction(torch.autograd.Function):
    """softmax(x * scale), causal or not, with fuseprof's kernels:
    SoftmaxFunction.apply(x, scale, causal) (softmax() calls it in eager
    mode)."""

    @staticmethod
    def forward(ctx, x, scale, causal):
        _softmax_args(x, scale, causal)
        y = _softmax_impl(x, float(scale), bool(causal))
        ctx.save_for_backward(y)
        ctx.scale = float(scale)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        dx = _softmax_backward_impl(y, dy.contiguous())
        if ctx.scale != 1.0:
            dx = dx * ctx.scale
        return dx, None, None


def softmax(x, scale=1.0, causal=False):
    """y = softmax(x * scale) over x's last dimension, in one kernel. With
    causal, x is [..., S, S] attention scores and query i sees keys 0..i
    (the others get 0). x: a contiguous CUDA tensor, float32 or bfloat16."""
    if _compiling():
        _softmax_args(x, scale, causal)
        return _softmax(x, float(scale), bool(causal))
    return SoftmaxFunction.apply(x, scale, causal)


# ---------------------------------------------------------------------------
# RMSNorm: y = x / sqrt(mean(x^2) + 1e-5) * gamma


def _rms_norm_impl(x, gamma):
    M, N = x.numel() // x.shape[-1], x.shape[-1]
    y = torch.empty_like(x)
    with _on(x):
        _lib.call("fpk_rmsnorm_fwd", _ptr(x), _ptr(gamma), _ptr(y), M, N, _DT[x.dtype],
                  _stream(x))
    return y


@torch.library.custom_op("fuseprof::rms_norm", mutates_args=())
def _rms_norm(x: Tensor, gamma: Tensor) -> Tensor:
    return _rms_norm_impl(x, gamma)


@_rms_norm.register_fake
def _(x, gamma):
    return torch.empty_like(x)


def _rms_norm_backward_impl(dy, x, gamma):
    M, N = x.numel() // x.shape[-1], x.shape[-1]
    dx = torch.empty_like(x)
    dgamma = torch.empty_like(gamma)
    with _on(x):
        dt = _DT[x.dtype]
        ws = _workspace(_size("fpk_rmsnorm_bwd_workspace", M, N, dt), x)
        _lib.call("fpk_rmsnorm_bwd", _ptr(dy), _ptr(x), _ptr(gamma), _ptr(dx),
                  _ptr(dgamma), M, N, dt, _ptr(ws), _nbytes(ws), _stream(x))
    return dx, dgamma


@torch.library.custom_op("fuseprof::rms_norm_backward", mutates_args=())
def _rms_norm_backward(dy: Tensor, x: Tensor, gamma: Tensor) -> Tuple[Tensor, Tensor]:
    return _rms_norm_backward_impl(dy, x, gamma)


@_rms_norm_backward.register_fake
def _(dy, x, gamma):
    return torch.empty_like(x), torch.empty_like(gamma)


def _rms_norm_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _rms_norm_grad(ctx, dy):
    x, gamma = ctx.saved_tensors
    return _rms_norm_backward(dy.contiguous(), x, gamma)


_rms_norm.register_autograd(_rms_norm_grad, setup_context=_rms_norm_setup)


def _rms_norm_args(x, gamma):
    fn = "fuseprof_torch.rms_norm"
    _check(fn, [("x", x), ("gamma", gamma)])
    M, N = _rows(fn, x, "the normalised width")
    if x.numel() == 0:
        raise ValueError(f"{fn}: x is empty (shape {tuple(x.shape)})")
    _shape(fn, "gamma", gamma, (N,))


class RMSNormFunction(torch.autograd.Function):
    """RMSNorm with fuseprof's fused forward and backward:
    RMSNormFunction.apply(x, gamma), as rms_norm() takes them."""

    @staticmethod
    def forward(ctx, x, gamma):
        _rms_norm_args(x, gamma)
        ctx.save_for_backward(x, gamma)
        return _rms_norm_impl(x, gamma)

    @staticmethod
    def backward(ctx, dy):
        x, gamma = ctx.saved_tensors
        return _rms_norm_backward_impl(dy.contiguous(), x, gamma)


def rms_norm(x, gamma):
    """y = x / sqrt(mean(x^2) + 1e-5) * gamma over x's last dimension, in one
    kernel (F.rms_norm with eps=1e-5). x: [..., N]; gamma: [N]; contiguous
    CUDA tensors of one dtype, float32 or bfloat16."""
    if _compiling():
        _rms_norm_args(x, gamma)
        return _rms_norm(x, gamma)
    return RMSNormFunction.apply(x, gamma)


# ---------------------------------------------------------------------------
# SwiGLU: y = silu(a) * b on xp = [..., 2N] packed as (a | b)


def _swiglu_impl(xp):
    N = xp.shape[-1] // 2
    M = xp.numel() // (2 * N)
    y = xp.new_empty(xp.shape[:-1] + (N,))
    with _on(xp):
        _lib.call("fpk_swiglu_fwd", _ptr(xp), _ptr(y), M, N, _DT[xp.dtype], _stream(xp))
    return y


@torch.library.custom_op("fuseprof::swiglu", mutates_args=())
def _swiglu(xp: Tensor) -> Tensor:
    return _swiglu_impl(xp)


@_swiglu.register_fake
def _(xp):
    return xp.new_empty(xp.shape[:-1] + (xp.shape[-1] // 2,))


def _swiglu_backward_impl(dy, xp):
    N = xp.shape[-1] // 2
    M = xp.numel() // (2 * N)
    dxp = torch.empty_like(xp)
    with _on(xp):
        _lib.call("fpk_swiglu_bwd", _ptr(dy), _ptr(xp), _ptr(dxp), M, N, _DT[xp.dtype],
                  _stream(xp))
    return dxp


@torch.library.custom_op("fuseprof::swiglu_backward", mutates_args=())
def _swiglu_backward(dy: Tensor, xp: Tensor) -> Tensor:
    return _swiglu_backward_impl(dy, xp)


@_swiglu_backward.register_fake
def _(dy, xp):
    return torch.empty_like(xp)


def _swiglu_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _swiglu_grad(ctx, dy):
    (xp,) = ctx.saved_tensors
    return _swiglu_backward(dy.contiguous(), xp)


_swiglu.register_autograd(_swiglu_grad, setup_context=_swiglu_setup)


def _swiglu_args(xp):
    fn = "fuseprof_torch.swiglu"
    _check(fn, [("xp", xp)])
    _rows(fn, xp, "2N")
    if xp.shape[-1] % 2 or xp.numel() == 0:
        raise ValueError(f"{fn}: xp has shape {tuple(xp.shape)}; its last dimension "
                         "must be even and positive (a and b side by side)")


class SwiGLUFunction(torch.autograd.Function):
    """SwiGLU on a packed (a | b) input with fuseprof's fused forward and
    backward: SwiGLUFunction.apply(xp), as swiglu() takes it."""

    @staticmethod
    def forward(ctx, xp):
        _swiglu_args(xp)
        ctx.save_for_backward(xp)
        return _swiglu_impl(xp)

    @staticmethod
    def backward(ctx, dy):
        (xp,) = ctx.saved_tensors
        return _swiglu_backward_impl(dy.contiguous(), xp)


def swiglu(xp):
    """y = silu(a) * b where xp = [..., 2N] holds a then b (as xp.chunk(2, -1)
    gives them), in one kernel; y: [..., N]. xp: a contiguous CUDA tensor,
    float32 or bfloat16."""
    if _compiling():
        _swiglu_args(xp)
        return _swiglu(xp)
    return SwiGLUFunction.apply(xp)


# ---------------------------------------------------------------------------
# Softplus: y = log(1 + exp(x)), computed stably


def _softplus_impl(x):
    y = torch.empty_like(x)
    with _on(x):
        _lib.call("fpk_softplus_fwd", _ptr(x), _ptr(y), x.numel(), _DT[x.dtype], _stream(x))
    return y


@torch.library.custom_op("fuseprof::softplus", mutates_args=())
def _softplus(x: Tensor) -> Tensor:
    return _softplus_impl(x)


@_softplus.register_fake
def _(x):
    return torch.empty_like(x)


def _softplus_backward_impl(dy, x):
    dx = torch.empty_like(x)
    with _on(x):
        _lib.call("fpk_softplus_bwd", _ptr(dy), _ptr(x), _ptr(dx), x.numel(),
                  _DT[x.dtype], _stream(x))
    return dx


@torch.library.custom_op("fuseprof::softplus_backward", mutates_args=())
def _softplus_backward(dy: Tensor, x: Tensor) -> Tensor:
    return _softplus_backward_impl(dy, x)


@_softplus_backward.register_fake
def _(dy, x):
    return torch.empty_like(x)


def _softplus_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _softplus_grad(ctx, dy):
    (x,) = ctx.saved_tensors
    return _softplus_backward(dy.contiguous(), x)


_softplus.register_autograd(_softplus_grad, setup_context=_softplus_setup)


def _softplus_args(x):
    fn = "fuseprof_torch.softplus"
    _check(fn, [("x", x)])
    if x.numel() == 0:
        raise ValueError(f"{fn}: x is empty (shape {tuple(x.shape)})")


class SoftplusFunction(torch.autograd.Function):
    """Softplus with fuseprof's kernels: SoftplusFunction.apply(x), as
    softplus() takes it."""

    @staticmethod
    def forward(ctx, x):
        _softplus_args(x)
        ctx.save_for_backward(x)
        return _softplus_impl(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        return _softplus_backward_impl(dy.contiguous(), x)


def softplus(x):
    """y = log(1 + exp(x)) elementwise, computed as max(x, 0) +
    log1p(exp(-|x|)) (finite for every finite x), in one kernel; the
    backward recomputes sigmoid(x). x: a contiguous CUDA tensor, float32 or
    bfloat16."""
    if _compiling():
        _softplus_args(x)
        return _softplus(x)
    return SoftplusFunction.apply(x)


# ---------------------------------------------------------------------------
# bias + ReLU, the backward from a 1-bit-per-element mask


def _bias_relu_impl(x, bias):
    N = x.shape[-1]
    M = x.numel() // N
    y = torch.empty_like(x)
    mask = torch.empty(_size("fpk_bias_relu_mask_bytes", M, N), dtype=torch.uint8,
                       device=x.device)
    with _on(x):
        _lib.call("fpk_bias_relu_fwd", _ptr(x), _ptr(bias), _ptr(y), _ptr(mask), M, N,
                  _DT[x.dtype], _stream(x))
    return y, mask


@torch.library.custom_op("fuseprof::bias_relu", mutates_args=())
def _bias_relu(x: Tensor, bias: Tensor) -> Tuple[Tensor, Tensor]:
    return _bias_relu_impl(x, bias)


@_bias_relu.register_fake
def _(x, bias):
    N = x.shape[-1]
    M = x.numel() // N
    return torch.empty_like(x), x.new_empty(((M * N + 31) // 32 * 4,), dtype=torch.uint8)


def _bias_relu_backward_impl(dy, mask):
    N = dy.shape[-1]
    M = dy.numel() // N
    dx = torch.empty_like(dy)
    dbias = dy.new_empty((N,))
    with _on(dy):
        dt = _DT[dy.dtype]
        ws = _workspace(_size("fpk_bias_relu_bwd_workspace", M, N, dt), dy)
        _lib.call("fpk_bias_relu_bwd", _ptr(dy), _ptr(mask), _ptr(dx), _ptr(dbias), M, N,
                  dt, _ptr(ws), _nbytes(ws), _stream(dy))
    return dx, dbias


@torch.library.custom_op("fuseprof::bias_relu_backward", mutates_args=())
def _bias_relu_backward(dy: Tensor, mask: Tensor) -> Tuple[Tensor, Tensor]:
    return _bias_relu_backward_impl(dy, mask)


@_bias_relu_backward.register_fake
def _(dy, mask):
    return torch.empty_like(dy), dy.new_empty((dy.shape[-1],))


def _bias_relu_setup(ctx, inputs, output):
    ctx.save_for_backward(output[1])


def _bias_relu_grad(ctx, dy, dmask):
    (mask,) = ctx.saved_tensors
    return _bias_relu_backward(dy.contiguous(), mask)


_bias_relu.register_autograd(_bias_relu_grad, setup_context=_bias_relu_setup)


def _bias_relu_args(x, bias):
    fn = "fuseprof_torch.bias_relu"
    _check(fn, [("x", x), ("bias", bias)])
    M, N = _rows(fn, x, "the row width")
    if x.numel() == 0:
        raise ValueError(f"{fn}: x is empty (shape {tuple(x.shape)})")
    _shape(fn, "bias", bias, (N,))


class BiasReLUFunction(torch.autograd.Function):
    """relu(x + bias) with fuseprof's kernels, the backward from a
    1-bit-per-element mask: BiasReLUFunction.apply(x, bias)."""

    @staticmethod
    def forward(ctx, x, bias):
        _bias_relu_args(x, bias)
        y, mask = _bias_relu_impl(x, bias)
        ctx.save_for_backward(mask)
        return y

    @staticmethod
    def backward(ctx, dy):
        (mask,) = ctx.saved_tensors
        return _bias_relu_backward_impl(dy.contiguous(), mask)


def bias_relu(x, bias):
    """y = relu(x + bias) over x's last dimension in one kernel, keeping one
    bit an element for the backward (1/32 of x's fp32 bytes). x: [..., N];
    bias: [N]; contiguous CUDA tensors of one dtype, float32 or bfloat16."""
    if _compiling():
        _bias_relu_args(x, bias)
        return _bias_relu(x, bias)[0]
    return BiasReLUFunction.apply(x, bias)


# ---------------------------------------------------------------------------
# bias + dropout + residual, the backward regenerating the mask from the seed


def _bias_dropout_add_impl(x, bias, residual, p, seed):
    N = x.shape[-1]
    M = x.numel() // N
    y = torch.empty_like(x)
    with _on(x):
        _lib.call("fpk_bias_dropout_add_fwd", _ptr(x), _ptr(bias), _ptr(residual), _ptr(y),
                  M, N, p, seed, _DT[x.dtype], _stream(x))
    return y


@torch.library.custom_op("fuseprof::bias_dropout_add", mutates_args=())
def _bias_dropout_add(x: Tensor, bias: Tensor, residual: Tensor, p: float,
                      seed: int) -> Tensor:
    return _bias_dropout_add_impl(x, bias, residual, p, seed)


@_bias_dropout_add.register_fake
def _(x, bias, residual, p, seed):
    return torch.empty_like(x)


def _bias_dropout_add_backward_impl(dy, p, seed):
    N = dy.shape[-1]
    M = dy.numel() // N
    dx = torch.empty_like(dy)
    dbias = dy.new_empty((N,))
    with _on(dy):
        dt = _DT[dy.dtype]
        ws = _workspace(_size("fpk_bias_dropout_add_bwd_workspace", M, N, dt), dy)
        _lib.call("fpk_bias_dropout_add_bwd", _ptr(dy), _ptr(dx), _ptr(dbias), M, N, p, seed,
                  dt, _ptr(ws), _nbytes(ws), _stream(dy))
    return dx, dbias


@torch.library.custom_op("fuseprof::bias_dropout_add_backward", mutates_args=())
def _bias_dropout_add_backward(dy: Tensor, p: float, seed: int) -> Tuple[Tensor, Tensor]:
    return _bias_dropout_add_backward_impl(dy, p, seed)


@_bias_dropout_add_backward.register_fake
def _(dy, p, seed):
    return torch.empty_like(dy), dy.new_empty((dy.shape[-1],))


def _bda_setup(ctx, inputs, output):
    ctx.p = inputs[3]
    ctx.seed = inputs[4]


def _bda_grad(ctx, dy):
    dx, dbias = _bias_dropout_add_backward(dy.contiguous(), ctx.p, ctx.seed)
    return dx, dbias, dy, None, None


_bias_dropout_add.register_autograd(_bda_grad, setup_context=_bda_setup)


def _bias_dropout_add_args(x, bias, residual):
    fn = "fuseprof_torch.bias_dropout_add"
    _check(fn, [("x", x), ("bias", bias), ("residual", residual)])
    M, N = _rows(fn, x, "the row width")
    if x.numel() == 0:
        raise ValueError(f"{fn}: x is empty (shape {tuple(x.shape)})")
    _shape(fn, "bias", bias, (N,))
    _shape(fn, "residual", residual, tuple(x.shape))


class BiasDropoutAddFunction(torch.autograd.Function):
    """dropout(x + bias, p) + residual with fuseprof's kernel, the mask
    regenerated from the seed in the backward:
    BiasDropoutAddFunction.apply(x, bias, residual, p, seed), p in (0, 1)
    and seed an int in [0, 2^64) (bias_dropout_add() checks both)."""

    @staticmethod
    def forward(ctx, x, bias, residual, p, seed):
        _bias_dropout_add_args(x, bias, residual)
        ctx.p, ctx.seed = p, seed
        return _bias_dropout_add_impl(x, bias, residual, p, seed)

    @staticmethod
    def backward(ctx, dy):
        dx, dbias = _bias_dropout_add_backward_impl(dy.contiguous(), ctx.p, ctx.seed)
        return dx, dbias, dy, None, None


def bias_dropout_add(x, bias, residual, p=0.1, training=True, seed=None):
    """y = dropout(x + bias, p) + residual in one kernel; nothing is kept for
    the backward, which regenerates the mask from (seed, element index)
    (Philox 4x32-10). seed: an int, or None to draw one from PyTorch's
    default generator (torch.randint: a graph break under torch.compile;
    pass your own seed there). Not training, or p = 0: x + bias + residual.
    x, residual: [..., N]; bias: [N]; contiguous CUDA tensors of one
    dtype, float32 or bfloat16."""
    fn = "fuseprof_torch.bias_dropout_add"
    _bias_dropout_add_args(x, bias, residual)
    if not isinstance(p, (int, float)) or not 0 <= p < 1:
        raise ValueError(f"{fn}: p={p!r} must be a probability in [0, 1)")
    if not training or p == 0:
        return x + bias + residual
    if seed is None:
        seed = int(torch.randint(0, 2 ** 62, (1,)).item())
    if not isinstance(seed, int) or not 0 <= seed < 2 ** 64:
        raise ValueError(f"{fn}: seed={seed!r} must be an int in [0, 2^64)")
    if _compiling():
        return _bias_dropout_add(x, bias, residual, float(p), seed)
    return BiasDropoutAddFunction.apply(x, bias, residual, float(p), seed)
