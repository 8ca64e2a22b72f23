/* args.c - the device pointers among a kernel launch's arguments (args.h).
 * Called at the entry of the driver's launch call, in the launching
 * thread, for counted launches only (`profile --metrics`): a driver call
 * for each parameter and each word that may be an address, a few µs a
 * launch beside the counters' two L2 flushes. */
#include "config.h"

#include <string.h>

#include <cuda.h>
#include <cupti.h>

#include "args.h"

static uint64_t drv_dev_bytes(uint64_t v, void *arg)
{
	CUdeviceptr base = 0;
	size_t bytes = 0;

	(void)arg;
	if (cuMemGetAddressRange(&base, &bytes, (CUdeviceptr)v) != CUDA_SUCCESS ||
	    v < (uint64_t)base || v - (uint64_t)base >= bytes)
		return 0;
	return (uint64_t)base + bytes - v;
}

/* Parameter i's offset and size: f is a CUfunction, or the CUkernel a
 * runtime launch passes in its place (which cuFuncGetParamInfo refuses
 * as an invalid handle). */
static int param_info(CUfunction f, int *as_kernel, size_t i, size_t *off, size_t *size)
{
	CUresult r;

	if (!*as_kernel) {
		r = cuFuncGetParamInfo(f, i, off, size);
		if (r != CUDA_ERROR_INVALID_HANDLE)
			return r == CUDA_SUCCESS ? 0 : -1;
		*as_kernel = 1;
	}
	return cuKernelGetParamInfo((CUkernel)(void *)f, i, off, size) == CUDA_SUCCESS ? 0 : -1;
}

/* The packed argument buffer of a launch's `extra`, or NULL. */
static const char *packed(void **extra)
{
	for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2)
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			return extra[i + 1];
	return NULL;
}

int args_of_launch(unsigned cbid, const void *params, uint64_t *out, uint64_t *bytes,
		   int max)
{
	size_t size[ARGS_SCAN_WORDS];
	const void *val[ARGS_SCAN_WORDS];
	const char *buf;
	CUfunction f;
	void **kp, **extra = NULL;
	int n = 0, as_kernel = 0;

	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		/* the two structs are alike */
		const cuLaunchKernel_params *p = params;

		f = p->f, kp = p->kernelParams, extra = p->extra;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = params;

		f = p->f, kp = p->kernelParams, extra = p->extra;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = params;

		f = p->f, kp = p->kernelParams;
		break;
	}
	default:
		return 0;
	}
	buf = kp ? NULL : packed(extra);
	if (!kp && !buf)
		return 0;
	for (size_t i = 0; i < ARGS_SCAN_WORDS; i++) {
		size_t off, sz;

		if (param_info(f, &as_kernel, i, &off, &sz))
			break;
		size[n] = sz;
		val[n] = kp ? kp[i] : buf + off;
		n++;
	}
	return args_pick(n, size, val, drv_dev_bytes, NULL, out, bytes, max);
}
