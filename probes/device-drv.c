/* device-drv.c - device facts through the driver API alone, for the
 * profiler inside someone else's program: no context created, no current
 * device changed, no runtime initialised. The same facts as device.c's
 * probe_device_open, so that a profiled run and `fuseprof run` on one GPU
 * share its devices row (and its ceilings). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "error.h"
#include "probes.h"

static int drv_error(CUresult r, const char *what, int index)
{
	const char *s = NULL;

	cuGetErrorString(r, &s);
	return error("cannot read %s of GPU %d: %s", what, index, s ? s : "unknown error");
}

int probe_device_query(int index, struct probe_device *d)
{
	static const struct {
		CUdevice_attribute a;
		size_t off;
	} attrs[] = {
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(struct probe_device, cc_major) },
		{ CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(struct probe_device, cc_minor) },
		{ CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(struct probe_device, sm_count) },
		{ CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, offsetof(struct probe_device, mem_bus_bits) },
		{ CU_DEVICE_ATTRIBUTE_CLOCK_RATE, offsetof(struct probe_device, sm_clock_khz) },
		{ CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, offsetof(struct probe_device, mem_clock_khz) },
	};
	CUdevice dev;
	CUuuid uuid;
	size_t mem = 0;
	int l2 = 0;
	uint32_t cupti = 0;
	CUresult r;
	const unsigned char *u;

	memset(d, 0, sizeof *d);
	if ((r = cuDeviceGet(&dev, index)) != CUDA_SUCCESS)
		return drv_error(r, "the handle", index);
	if ((r = cuDeviceGetName(d->name, (int)sizeof d->name, dev)) != CUDA_SUCCESS)
		return drv_error(r, "the name", index);
	if ((r = cuDeviceGetUuid(&uuid, dev)) != CUDA_SUCCESS)
		return drv_error(r, "the UUID", index);
	if ((r = cuDeviceTotalMem(&mem, dev)) != CUDA_SUCCESS)
		return drv_error(r, "the memory size", index);
	if ((r = cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev)) != CUDA_SUCCESS)
		return drv_error(r, "the L2 size", index);
	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
		r = cuDeviceGetAttribute((int *)((char *)d + attrs[i].off), attrs[i].a, dev);
		if (r != CUDA_SUCCESS)
			return drv_error(r, "a property", index);
	}
	d->index = index;
	u = (const unsigned char *)uuid.bytes;
	snprintf(d->uuid, sizeof d->uuid,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
	d->l2_bytes = l2;
	d->mem_bytes = (long long)mem;
	cuDriverGetVersion(&d->driver_version);
	/* The runtime this fuseprof was built with, as `run` records the one
	 * it loaded (the same toolkit); asking a runtime would initialise one
	 * inside the program. */
	d->runtime_version = CUDART_VERSION;
	if (cuptiGetVersion(&cupti) == CUPTI_SUCCESS)
		d->cupti_version = (int)cupti;
	return 0;
}
