/* device.c - device facts for each run (name, UUID, compute capability,
 * SMs, L2, memory, clocks, driver/runtime/CUPTI versions), and the checks
 * that turn "no driver" or "no GPU" into one clear line. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "error.h"
#include "probes.h"

int probe_device_count(int *n)
{
	cudaError_t e = cudaGetDeviceCount(n);

	if (e == cudaSuccess && *n > 0)
		return 0;
	*n = 0;
	if (e == cudaErrorInsufficientDriver)
		error("no usable GPU: the NVIDIA driver is missing or older than "
		      "this CUDA runtime (%d.%d) needs: install or update the driver",
		      CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
	else if (e == cudaErrorNoDevice || e == cudaSuccess)
		error("no usable GPU: CUDA finds no device (check nvidia-smi and "
		      "CUDA_VISIBLE_DEVICES)");
	else
		error("no usable GPU: %s (check nvidia-smi and the driver)",
		      cudaGetErrorString(e));
	return PROBE_NO_GPU;
}

static int attr(int *v, enum cudaDeviceAttr a, int dev)
{
	cudaError_t e = cudaDeviceGetAttribute(v, a, dev);

	if (e != cudaSuccess)
		return error("cannot read a property of GPU %d: %s", dev,
			     cudaGetErrorString(e));
	return 0;
}

static void format_uuid(char *out, size_t size, const cudaUUID_t *id)
{
	const unsigned char *u = (const unsigned char *)id->bytes;

	snprintf(out, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
		 u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int probe_device_find(const char *uuid, int *index)
{
	struct cudaDeviceProp p;
	char id[48];
	int n;

	if (probe_device_count(&n))
		return PROBE_NO_GPU;
	for (int i = 0; i < n; i++) {
		cudaError_t e = cudaGetDeviceProperties(&p, i);

		if (e != cudaSuccess)
			return error("cannot read GPU %d: %s", i, cudaGetErrorString(e));
		format_uuid(id, sizeof id, &p.uuid);
		if (!strcmp(id, uuid)) {
			*index = i;
			return 0;
		}
	}
	return error("no GPU here has the UUID '%s' ('nvidia-smi -L' lists them)", uuid);
}

int probe_device_open(int index, struct probe_device *d)
{
	struct cudaDeviceProp p;
	uint32_t cupti = 0;
	int n, l2 = 0, bus = 0, clk = 0, mclk = 0;
	cudaError_t e;

	memset(d, 0, sizeof *d);
	if (probe_device_count(&n))
		return PROBE_NO_GPU;
	if (index < 0 || index >= n)
		return error("no GPU %d: this machine has %d (use --device 0..%d)",
			     index, n, n - 1);
	e = cudaSetDevice(index);
	if (e == cudaSuccess)
		e = cudaFree(NULL);  /* creates the primary context now */
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&p, index);
	if (e != cudaSuccess)
		return error("cannot use GPU %d: %s", index, cudaGetErrorString(e));
	if (attr(&l2, cudaDevAttrL2CacheSize, index) ||
	    attr(&bus, cudaDevAttrGlobalMemoryBusWidth, index) ||
	    attr(&clk, cudaDevAttrClockRate, index) ||
	    attr(&mclk, cudaDevAttrMemoryClockRate, index))
		return -1;
	d->index = index;
	snprintf(d->name, sizeof d->name, "%s", p.name);
	format_uuid(d->uuid, sizeof d->uuid, &p.uuid);
	d->cc_major = p.major;
	d->cc_minor = p.minor;
	d->sm_count = p.multiProcessorCount;
	d->l2_bytes = l2;
	d->mem_bytes = (long long)p.totalGlobalMem;
	d->mem_bus_bits = bus;
	d->sm_clock_khz = clk;
	d->mem_clock_khz = mclk;
	cudaDriverGetVersion(&d->driver_version);
	cudaRuntimeGetVersion(&d->runtime_version);
	if (cuptiGetVersion(&cupti) == CUPTI_SUCCESS)
		d->cupti_version = (int)cupti;
	return 0;
}

int probe_device_free_bytes(size_t *free_bytes)
{
	size_t total;
	cudaError_t e = cudaMemGetInfo(free_bytes, &total);

	if (e != cudaSuccess)
		return error("cannot read free GPU memory: %s", cudaGetErrorString(e));
	return 0;
}
