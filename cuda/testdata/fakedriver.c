// fakedriver.c: a stand-in for libcuda.so.1 (fakenvml.c is NVML's), built by
// the cuda package's tests (driver_cgo_test.go) to run the real cgo path —
// dlopen, dlsym, every call the package makes — on a machine without a GPU.
// A "kernel" completes when it is launched: a spin writes at once the
// stamps it would have on a stream that runs kernels back to back 1 µs
// apart; timer_step writes 32. Calls that need a context fail unless the
// calling thread made one current, as the real driver does. It has an
// H100's SMs, and refuses launches the driver would refuse: more than 48
// KiB of dynamic shared memory before the spin's limit was raised, and a
// spin of several blocks without its zeroed slot. At each primary-context
// release it writes what is still allocated to the file named by
// FAKECUDA_LOG.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
enum { OK = 0, ERR_INVALID_VALUE = 1, ERR_INVALID_CONTEXT = 201, ERR_NOT_FOUND = 500 };

static __thread int current;            // a context is current on this thread
static int streams, events, devmem, hostmem; // live objects
static size_t devbytes;

static unsigned long long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#define NEED_CTX() do { if (!current) return ERR_INVALID_CONTEXT; } while (0)

// traced stands for a profiler's callbacks: with FAKECUDA_TRACED_NS set
// (the fake nsys of the calibrate test sets it), the calls that
// calibrate --profiler-overhead times spin that long.
static void traced(void) {
	static long long ns = -1;
	if (ns < 0) {
		const char *v = getenv("FAKECUDA_TRACED_NS");
		ns = v != NULL ? atoll(v) : 0;
	}
	if (ns > 0) {
		unsigned long long until = now_ns() + (unsigned long long)ns;
		while (now_ns() < until) {
		}
	}
}

CUresult cuInit(unsigned int f) { (void)f; return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int o) { if (o != 0) return ERR_INVALID_VALUE; *d = 0; return OK; }
CUresult cuDeviceGetName(char *s, int n, int d) { (void)d; snprintf(s, n, "Fake Driver GPU"); return OK; }
CUresult cuDeviceGetPCIBusId(char *s, int n, int d) { (void)d; snprintf(s, n, "0000:00:06.0"); return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { (void)d; *ctx = (void *)0x1; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) {
	(void)d;
	const char *path = getenv("FAKECUDA_LOG");
	if (path != NULL) {
		FILE *f = fopen(path, "a");
		if (f != NULL) {
			fprintf(f, "streams=%d events=%d devmem=%d hostmem=%d\n", streams, events, devmem, hostmem);
			fclose(f);
		}
	}
	return OK;
}
CUresult cuCtxSetCurrent(void *ctx) { current = ctx != NULL; return OK; }
CUresult cuCtxSynchronize(void) { NEED_CTX(); return OK; }
CUresult cuModuleLoadData(void **m, const void *image) {
	NEED_CTX();
	if (strstr((const char *)image, ".entry spin") == NULL) return ERR_INVALID_VALUE;
	*m = (void *)0x2;
	return OK;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
	NEED_CTX();
	(void)m;
	if (strcmp(name, "spin") == 0) { *f = (void *)0x3; return OK; }
	if (strcmp(name, "timer_step") == 0) { *f = (void *)0x4; return OK; }
	return ERR_NOT_FOUND;
}
CUresult cuModuleUnload(void *m) { NEED_CTX(); (void)m; return OK; }
CUresult cuStreamCreate(void **s, unsigned int flags) { NEED_CTX(); (void)flags; *s = calloc(1, 8); streams++; return OK; }
CUresult cuStreamDestroy_v2(void *s) { NEED_CTX(); free(s); streams--; return OK; }
CUresult cuStreamSynchronize(void *s) { NEED_CTX(); traced(); return s ? OK : ERR_INVALID_VALUE; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned int f) { NEED_CTX(); (void)f; return s && e ? OK : ERR_INVALID_VALUE; }
// The spin's dynamic shared memory may exceed 48 KiB only once
// cuFuncSetAttribute raised its limit, as on a real GPU.
static int spin_max_dynamic = 48 << 10;
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *s, void **params, void **extra) {
	NEED_CTX();
	traced();
	(void)extra;
	if (s == NULL || params == NULL || gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1) return ERR_INVALID_VALUE;
	if (f == (void *)0x3) {
		if ((int)shared > spin_max_dynamic) return ERR_INVALID_VALUE;
		unsigned long long ns = *(unsigned long long *)params[0];
		unsigned long long *stamps = *(unsigned long long **)params[1];
		unsigned long long slot = *(unsigned long long *)params[2];
		if ((gx > 1) != (slot != 0)) return ERR_INVALID_VALUE; // a grid of several blocks needs its slot
		if (slot != 0 && (((unsigned long long *)(uintptr_t)slot)[0] != 0 || ((unsigned long long *)(uintptr_t)slot)[1] != 0))
			return ERR_INVALID_VALUE; // the slot must be zero at launch
		// The stream runs its kernels one after another, 1 µs apart.
		unsigned long long *busy = (unsigned long long *)s, start = now_ns();
		if (*busy + 1000 > start) start = *busy + 1000;
		*busy = start + ns;
		if (stamps != NULL) {
			stamps[0] = start;
			stamps[1] = start + ns;
		}
		return OK;
	}
	if (f == (void *)0x4) {
		if (gx != 1 || bx != 1 || shared != 0) return ERR_INVALID_VALUE;
		**(unsigned long long **)params[0] = 32;
		return OK;
	}
	return ERR_INVALID_VALUE;
}
// An H100's SMs; the spin has 16 registers a thread and no static shared
// memory.
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
	(void)d;
	switch (attr) {
	case 16: *v = 132; return OK;     // MULTIPROCESSOR_COUNT
	case 39: *v = 2048; return OK;    // MAX_THREADS_PER_MULTIPROCESSOR
	case 81: *v = 233472; return OK;  // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
	case 82: *v = 65536; return OK;   // MAX_REGISTERS_PER_MULTIPROCESSOR
	case 97: *v = 232448; return OK;  // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	case 106: *v = 32; return OK;     // MAX_BLOCKS_PER_MULTIPROCESSOR
	case 111: *v = 1024; return OK;   // RESERVED_SHARED_MEMORY_PER_BLOCK
	}
	return ERR_INVALID_VALUE;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *f) {
	NEED_CTX();
	if (f != (void *)0x3 && f != (void *)0x4) return ERR_INVALID_VALUE;
	switch (attr) {
	case 1: *v = 0; return OK;  // SHARED_SIZE_BYTES
	case 4: *v = 16; return OK; // NUM_REGS
	}
	return ERR_INVALID_VALUE;
}
CUresult cuFuncSetAttribute(void *f, int attr, int v) {
	NEED_CTX();
	if (f != (void *)0x3 && f != (void *)0x4) return ERR_INVALID_VALUE;
	switch (attr) {
	case 8: // MAX_DYNAMIC_SHARED_SIZE_BYTES
		if (v < 0 || v > 232448) return ERR_INVALID_VALUE;
		if (f == (void *)0x3) spin_max_dynamic = v;
		return OK;
	case 9: // PREFERRED_SHARED_MEMORY_CARVEOUT
		return v >= -1 && v <= 100 ? OK : ERR_INVALID_VALUE;
	}
	return ERR_INVALID_VALUE;
}
CUresult cuEventCreate(void **e, unsigned int flags) { NEED_CTX(); (void)flags; *e = calloc(1, 8); events++; return OK; }
CUresult cuEventRecord(void *e, void *s) { NEED_CTX(); traced(); if (!e || !s) return ERR_INVALID_VALUE; *(unsigned long long *)e = now_ns(); return OK; }
CUresult cuEventSynchronize(void *e) { NEED_CTX(); return e ? OK : ERR_INVALID_VALUE; }
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) {
	NEED_CTX();
	*ms = (float)((double)(*(unsigned long long *)b - *(unsigned long long *)a) / 1e6);
	return OK;
}
CUresult cuEventDestroy_v2(void *e) { NEED_CTX(); free(e); events--; return OK; }
// Device memory: a size header before the bytes, for cuMemGetInfo.
CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
	NEED_CTX();
	size_t *h = malloc(n + 16);
	h[0] = n;
	*p = (unsigned long long)(uintptr_t)(h + 2);
	devmem++;
	devbytes += n;
	return OK;
}
CUresult cuMemFree_v2(unsigned long long p) {
	NEED_CTX();
	size_t *h = (size_t *)(uintptr_t)p - 2;
	devbytes -= h[0];
	free(h);
	devmem--;
	return OK;
}
CUresult cuMemAllocHost_v2(void **p, size_t n) { NEED_CTX(); *p = malloc(n); hostmem++; return OK; }
CUresult cuMemFreeHost(void *p) { NEED_CTX(); free(p); hostmem--; return OK; }
CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { NEED_CTX(); memcpy(d, (void *)(uintptr_t)s, n); return OK; }
CUresult cuMemcpyDtoHAsync_v2(void *d, unsigned long long s, size_t n, void *st) { NEED_CTX(); traced(); (void)st; memcpy(d, (void *)(uintptr_t)s, n); return OK; }
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void *s, size_t n, void *st) { NEED_CTX(); (void)st; memcpy((void *)(uintptr_t)d, s, n); return OK; }
CUresult cuMemsetD8_v2(unsigned long long p, unsigned char c, size_t n) { NEED_CTX(); memset((void *)(uintptr_t)p, c, n); return OK; }
CUresult cuMemsetD8Async(unsigned long long p, unsigned char c, size_t n, void *st) { NEED_CTX(); (void)st; memset((void *)(uintptr_t)p, c, n); return OK; }
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) { NEED_CTX(); *total = (size_t)80 << 30; *free_bytes = *total - devbytes; return OK; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = r == ERR_INVALID_CONTEXT ? "invalid device context" : "fake error"; return OK; }
CUresult cuGetErrorName(CUresult r, const char **s) { *s = r == ERR_INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_FAKE"; return OK; }
