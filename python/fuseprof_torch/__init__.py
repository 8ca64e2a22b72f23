"""fuseprof_torch: fuseprof's fused kernels (libfuseprof-kernels) as
PyTorch custom operators with autograd, and nn.Modules over them.

    import fuseprof_torch as fpt
    layer = fpt.FusedLayerNormLinear(768, 3072, device="cuda", dtype=torch.bfloat16)
    y = layer(x)            # x: [..., 768], contiguous, on the GPU
    y.sum().backward()      # fuseprof's fused backward

In eager mode the functions run torch.autograd.Functions
(LayerNormLinearFunction, ...); under torch.compile they call the custom
operators (torch.ops.fuseprof.ln_linear, .ln_gelu, .softmax, .rms_norm,
.swiglu, .softplus, .bias_relu, .bias_dropout_add and their _backward),
which the compiler keeps as opaque nodes without breaking the graph. The
library is found through $FUSEPROF_KERNELS_LIB, the install prefix, or an
in-tree build (see _lib.py).
"""
from .modules import FusedLayerNormGELU, FusedLayerNormLinear, FusedSoftmax
from .ops import (BiasDropoutAddFunction, BiasReLUFunction, LayerNormGELUFunction,
                  LayerNormLinearFunction, RMSNormFunction, SoftmaxFunction,
                  SoftplusFunction, SwiGLUFunction, bias_dropout_add, bias_relu, ln_gelu,
                  ln_linear, rms_norm, softmax, softplus, swiglu)
from ._lib import KernelError

__all__ = ["FusedLayerNormLinear", "FusedLayerNormGELU", "FusedSoftmax",
           "ln_linear", "ln_gelu", "softmax", "rms_norm", "swiglu", "softplus",
           "bias_relu", "bias_dropout_add", "KernelError",
           "LayerNormLinearFunction", "LayerNormGELUFunction", "SoftmaxFunction",
           "RMSNormFunction", "SwiGLUFunction", "SoftplusFunction", "BiasReLUFunction",
           "BiasDropoutAddFunction"]
