## kernels/layernorm/local.mk - LayerNorm over rows on the GPU: the row
## kernels that LayerNorm+GELU and LayerNorm+Linear share (rows.cuh), and
## the plain LayerNorm entry points of layernorm.h.

kernels_libfpkernels_a_SOURCES += kernels/layernorm/layernorm.h \
	kernels/layernorm/rows.cuh kernels/layernorm/layernorm.cu
## nvcc objects get no automatic dependency tracking; layernorm.h itself is
## in kernels_headers (kernels/local.mk), as every family may include it.
layernorm_headers = kernels/layernorm/rows.cuh
kernels/layernorm/layernorm.$(OBJEXT): $(layernorm_headers) $(kernels_headers)
