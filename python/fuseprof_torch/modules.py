"""nn.Modules over fuseprof's fused operators (ops.py)."""
import math

import torch
from torch import nn

from . import ops


class FusedLayerNormLinear(nn.Module):
    """nn.Linear(nn.LayerNorm(x)) as one fused forward and fuseprof's fused
    backward. Parameters as the two modules name them: ln_weight, ln_bias
    (the LayerNorm's gamma, beta: [in_features]), weight ([out_features,
    in_features]) and bias ([out_features]); eps is 1e-5, the kernels'.
    Build one from existing modules with from_modules()."""

    def __init__(self, in_features, out_features, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.out_features = out_features
        self.ln_weight = nn.Parameter(torch.ones(in_features, **kw))
        self.ln_bias = nn.Parameter(torch.zeros(in_features, **kw))
        self.weight = nn.Parameter(torch.empty(out_features, in_features, **kw))
        self.bias = nn.Parameter(torch.empty(out_features, **kw))
        self.reset_parameters()

    def reset_parameters(self):
        # nn.Linear's initialisation
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
        nn.init.uniform_(self.bias, -bound, bound)
        nn.init.ones_(self.ln_weight)
        nn.init.zeros_(self.ln_bias)

    @classmethod
    def from_modules(cls, ln, linear):
        """The fused module holding copies of ln's (an nn.LayerNorm with
        eps 1e-5 and an affine part) and linear's (an nn.Linear with a bias)
        parameters."""
        if not isinstance(ln, nn.LayerNorm) or not isinstance(linear, nn.Linear):
            raise TypeError("FusedLayerNormLinear.from_modules takes an nn.LayerNorm "
                            "and an nn.Linear")
        if ln.weight is None or ln.bias is None or linear.bias is None:
            raise ValueError("FusedLayerNormLinear.from_modules: the LayerNorm needs "
                             "its affine part and the Linear its bias")
        if ln.eps != 1e-5:
            raise ValueError(f"FusedLayerNormLinear.from_modules: eps={ln.eps}; the "
                             "fused kernels use 1e-5")
        if tuple(ln.normalized_shape) != (linear.in_features,):
            raise ValueError("FusedLayerNormLinear.from_modules: the LayerNorm's width "
                             f"{tuple(ln.normalized_shape)} is not the Linear's "
                             f"in_features {linear.in_features}")
        m = cls(linear.in_features, linear.out_features, device=linear.weight.device,
                dtype=linear.weight.dtype)
        with torch.no_grad():
            m.ln_weight.copy_(ln.weight)
            m.ln_bias.copy_(ln.bias)
            m.weight.copy_(linear.weight)
            m.bias.copy_(linear.bias)
        return m

    def forward(self, x):
        return ops.ln_linear(x, self.ln_weight, self.ln_bias, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}"


class FusedLayerNormGELU(nn.Module):
    """GELU(LayerNorm(x)) in one kernel, forward and backward. approximate
    as torch.nn.GELU takes it ("tanh" or "none"); eps 1e-5."""

    def __init__(self, normalized_shape, approximate="tanh", device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, (tuple, list)):
            if len(normalized_shape) != 1:
                raise ValueError("FusedLayerNormGELU normalises over the last "
                                 f"dimension only, got {normalized_shape}")
            normalized_shape = normalized_shape[0]
        if approximate not in ("tanh", "none"):
            raise ValueError(f"FusedLayerNormGELU: approximate={approximate!r}; it takes "
                             "'tanh' or 'none'")
        self.normalized_shape = int(normalized_shape)
        self.approximate = approximate
        self.weight = nn.Parameter(torch.ones(self.normalized_shape, device=device,
                                              dtype=dtype))
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape, device=device,
                                             dtype=dtype))

    def forward(self, x):
        return ops.ln_gelu(x, self.weight, self.bias, self.approximate)

    def extra_repr(self):
        return f"{self.normalized_shape}, approximate={self.approximate!r}"


class FusedSoftmax(nn.Module):
    """softmax(x * scale) over the last dimension in one kernel; causal for
    square [..., S, S] attention scores (query i sees keys 0..i)."""

    def __init__(self, scale=1.0, causal=False):
        super().__init__()
        self.scale = float(scale)
        self.causal = bool(causal)

    def forward(self, x):
        return ops.softmax(x, self.scale, self.causal)

    def extra_repr(self):
        return f"scale={self.scale}, causal={self.causal}"
