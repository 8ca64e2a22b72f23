/* args.h - the device pointers a kernel launch passes (its arguments'
 * 8-byte words that lie in a device allocation): the evidence of which
 * buffers a kernel touches, which counters cannot give. */
#ifndef FP_INJECT_ARGS_H
#define FP_INJECT_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* Words scanned at most in one launch's arguments (4 KB: a struct of
 * pointers as large as PyTorch's multi-tensor lists is cut there). */
#define ARGS_SCAN_WORDS 512

/* The pointers among n parameters of sizes size[i] whose values lie at
 * val[i]: each 8-byte word (at offsets 0, 8, ... within a parameter, as
 * a 64-bit ABI aligns pointers) for which dev_bytes(word, arg) gives the
 * bytes from it to the end of its device allocation (0: not a device
 * address), in order, each once, at most max into out, those bytes into
 * bytes; a word of 0 or below 4 GiB is never one (small integers, sizes,
 * flags). Returns how many, or -1 - how many when more were there than
 * max or words than ARGS_SCAN_WORDS (the list is cut, not wrong). */
int args_pick(int n, const size_t *size, const void *const *val,
	      uint64_t (*dev_bytes)(uint64_t word, void *arg), void *arg, uint64_t *out,
	      uint64_t *bytes, int max);

/* The same for the driver launch call cbid (a CUpti_CallbackId of the
 * driver domain) with CUPTI's parameters of that call, at its entry:
 * cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel and their
 * per-thread-stream forms, arguments given as kernelParams or as a
 * packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER). The parameters' layout
 * comes from the driver (cuFuncGetParamInfo, or cuKernelGetParamInfo for
 * the CUkernel a CUDA 12+ runtime launch passes as its CUfunction); a
 * word is a device pointer when cuMemGetAddressRange finds its
 * allocation. Returns as args_pick, or 0 for any other call. */
int args_of_launch(unsigned cbid, const void *params, uint64_t *out, uint64_t *bytes,
		   int max);

#endif
