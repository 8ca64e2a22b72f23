## kernels/ln_gelu.mk - (empty until its folder's work lands)
