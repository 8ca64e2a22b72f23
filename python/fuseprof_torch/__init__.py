"""fuseprof_torch: fuseprof's fused kernels (libfuseprof-kernels) as
PyTorch custom operators with autograd, and nn.Modules over them.

    import fuseprof_torch as fpt
    layer = fpt.FusedLayerNormLinear(768, 3072, device="cuda", dtype=torch.bfloat16)
    y = layer(x)            # x: [..., 768], contiguous, on the GPU
    y.sum().backward()      # fuseprof's fused backward

The operators (torch.ops.fuseprof.ln_linear, .ln_gelu, .softmax,
.rms_norm, .swiglu, .softplus and their _backward) are opaque to torch.compile: it calls them without breaking the
graph. The library is found through $FUSEPROF_KERNELS_LIB, the install
prefix, or an in-tree build (see _lib.py).
"""
from .modules import FusedLayerNormGELU, FusedLayerNormLinear, FusedSoftmax
from .ops import (bias_dropout_add, bias_relu, ln_gelu, ln_linear, rms_norm, softmax,
                  softplus, swiglu)
from ._lib import KernelError

__all__ = ["FusedLayerNormLinear", "FusedLayerNormGELU", "FusedSoftmax",
           "ln_linear", "ln_gelu", "softmax", "rms_norm", "swiglu", "softplus",
           "bias_relu", "bias_dropout_add", "KernelError"]
