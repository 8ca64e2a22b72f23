// profile-app.cu - a CUDA program that knows nothing of fuseprof, for
// tests/test-profile-gpu.sh, which builds it with nvcc and profiles it:
// known kernels inside known NVTX ranges.
//
//   profile-app plain      3 steps, each: range "step" holding range "copy"
//                          (copy_kernel once) and range "scale" (scale_kernel
//                          twice); then fill_kernel outside any range;
//                          add_kernel in the start/end range "phase"; and
//                          copy_kernel in "app_range" of the NVTX domain "app"
//   profile-app fork       fork first, then both processes run plain
//   profile-app big        range "bigcopy" (copy_kernel) and "bigcopy4"
//                          (copy4_kernel), twice, each copying 256 MB
//   profile-app gap        3 times: range "gap/small" (scale_kernel on
//                          4 KB), then a 32 MB device-to-device copy (no
//                          kernel: work the collector does not see), then
//                          range "gap/after" (scale_kernel on 4 KB); the
//                          copy's dirty lines are nobody's write-back
//   profile-app loop FILE  write its pid to FILE, then launch copy_kernel in
//                          range "loop/iter" about 1,000 times a second until
//                          killed
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "profile-app: %s: %s\n", #call, cudaGetErrorString(e_)); \
		exit(2); \
	} \
} while (0)

__global__ void copy_kernel(float *dst, const float *src, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = src[i];
}

__global__ void scale_kernel(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= a;
}

__global__ void fill_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = 1.0f;
}

__global__ void add_kernel(float *c, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

static const int N = 1 << 20;

static void plain(void)
{
	float *a, *b, *c;
	int grid = (N + 255) / 256;

	CHECK(cudaMalloc(&a, N * sizeof(float)));
	CHECK(cudaMalloc(&b, N * sizeof(float)));
	CHECK(cudaMalloc(&c, N * sizeof(float)));
	for (int s = 0; s < 3; s++) {
		nvtxRangePushA("step");
		nvtxRangePushA("copy");
		copy_kernel<<<grid, 256>>>(b, a, N);
		nvtxRangePop();
		nvtxRangePushA("scale");
		scale_kernel<<<grid, 256>>>(b, 2.0f, N);
		scale_kernel<<<grid, 256>>>(b, 0.5f, N);
		nvtxRangePop();
		nvtxRangePop();
	}
	fill_kernel<<<grid, 256>>>(c, N);
	nvtxRangeId_t phase = nvtxRangeStartA("phase");
	add_kernel<<<grid, 256>>>(c, a, b, N);
	nvtxRangeEnd(phase);
	nvtxDomainHandle_t dom = nvtxDomainCreateA("app");
	nvtxEventAttributes_t ev;
	memset(&ev, 0, sizeof ev);
	ev.version = NVTX_VERSION;
	ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
	ev.message.ascii = "app_range";
	nvtxDomainRangePushEx(dom, &ev);
	copy_kernel<<<grid, 256>>>(c, a, N);
	nvtxDomainRangePop(dom);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(a));
	CHECK(cudaFree(b));
	CHECK(cudaFree(c));
}

/* 2 x 256 MB of DRAM traffic a copy, far more than any L2: range
 * "bigcopy" twice (copy_kernel, then copy4_kernel with 16-byte accesses),
 * for the counters' bytes. */
__global__ void copy4_kernel(float4 *dst, const float4 *src, long n)
{
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

static void big(void)
{
	const long n = 64l << 20;  /* floats: 256 MB */
	float *a, *b;

	CHECK(cudaMalloc(&a, n * sizeof(float)));
	CHECK(cudaMalloc(&b, n * sizeof(float)));
	CHECK(cudaMemset(a, 0, n * sizeof(float)));
	for (int i = 0; i < 2; i++) {
		nvtxRangePushA("bigcopy");
		copy_kernel<<<(unsigned)((n + 255) / 256), 256>>>(b, a, (int)n);
		nvtxRangePop();
		nvtxRangePushA("bigcopy4");
		copy4_kernel<<<132 * 8, 256>>>((float4 *)a, (const float4 *)b, n / 4);
		nvtxRangePop();
	}
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(a));
	CHECK(cudaFree(b));
}

static void gap(void)
{
	const size_t big = 32u << 20;
	float *s, *a, *b;

	CHECK(cudaMalloc(&s, 4096));
	CHECK(cudaMalloc(&a, big));
	CHECK(cudaMalloc(&b, big));
	CHECK(cudaMemset(s, 0, 4096));
	CHECK(cudaMemset(a, 0, big));
	CHECK(cudaDeviceSynchronize());
	for (int i = 0; i < 3; i++) {
		nvtxRangePushA("gap");
		nvtxRangePushA("small");
		scale_kernel<<<4, 256>>>(s, 2.0f, 1024);
		nvtxRangePop();
		CHECK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice, 0));
		nvtxRangePushA("after");
		scale_kernel<<<4, 256>>>(s, 0.5f, 1024);
		nvtxRangePop();
		nvtxRangePop();
	}
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(s));
	CHECK(cudaFree(a));
	CHECK(cudaFree(b));
}

static void loop(const char *pidfile)
{
	float *a, *b;
	FILE *f;

	CHECK(cudaMalloc(&a, N * sizeof(float)));
	CHECK(cudaMalloc(&b, N * sizeof(float)));
	f = fopen(pidfile, "w");
	if (!f)
		exit(2);
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
	nvtxRangePushA("loop");
	for (long i = 0; i < 600000; i++) {
		nvtxRangePushA("iter");
		copy_kernel<<<(N + 255) / 256, 256>>>(b, a, N);
		nvtxRangePop();
		CHECK(cudaDeviceSynchronize());
		usleep(1000);
	}
	nvtxRangePop();
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "plain")) {
		plain();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "fork")) {
		int status = 0;
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		plain();
		if (pid == 0)
			return 0;
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			return 3;
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "big")) {
		big();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "gap")) {
		gap();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "loop")) {
		loop(argv[2]);
		return 0;
	}
	fprintf(stderr, "usage: profile-app plain | fork | big | gap | loop PIDFILE\n");
	return 2;
}
