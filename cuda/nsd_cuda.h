// nsd_cuda.h: the CUDA driver API as the cuda package uses it, loaded at
// run time with dlopen, so that building needs no CUDA toolkit. Included
// by the package's cgo files; every function is static.
#ifndef NSD_CUDA_H
#define NSD_CUDA_H

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// The CUDA driver API, declared here so that building needs no CUDA
// toolkit: the types are opaque handles and the functions are looked up in
// libcuda.so.1 at run time.
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;

typedef struct {
	void *lib;
	CUresult (*cuInit)(unsigned int);
	CUresult (*cuDriverGetVersion)(int *);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuModuleUnload)(CUmodule);
	CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
	CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
	CUresult (*cuStreamCreate)(CUstream *, unsigned int);
	CUresult (*cuStreamDestroy)(CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned int);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
		unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
	CUresult (*cuEventCreate)(CUevent *, unsigned int);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuEventDestroy)(CUevent);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemAllocHost)(void **, size_t);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*cuMemGetInfo)(size_t *, size_t *);
	CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*cuGetErrorString)(CUresult, const char **);
	CUresult (*cuGetErrorName)(CUresult, const char **);
} nsd_cuda;

// nsd_cuda_open fills d from libcuda.so.1. It returns 0, 1 when the
// library is absent (err holds dlerror), 2 when a symbol is missing (err
// names it).
static inline int nsd_cuda_open(nsd_cuda *d, char *err, size_t errlen) {
	memset(d, 0, sizeof *d);
	d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (d->lib == NULL) {
		const char *e = dlerror();
		strncpy(err, e ? e : "dlopen failed", errlen - 1);
		return 1;
	}
#define NSD_SYM(field, name) \
	do { \
		*(void **)(&d->field) = dlsym(d->lib, name); \
		if (d->field == NULL) { strncpy(err, name, errlen - 1); dlclose(d->lib); d->lib = NULL; return 2; } \
	} while (0)
#define NSD_SYM2(field, name, fallback) \
	do { \
		*(void **)(&d->field) = dlsym(d->lib, name); \
		if (d->field == NULL) NSD_SYM(field, fallback); \
	} while (0)
	NSD_SYM(cuInit, "cuInit");
	NSD_SYM(cuDriverGetVersion, "cuDriverGetVersion");
	NSD_SYM(cuDeviceGetCount, "cuDeviceGetCount");
	NSD_SYM(cuDeviceGet, "cuDeviceGet");
	NSD_SYM(cuDeviceGetName, "cuDeviceGetName");
	NSD_SYM(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
	NSD_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
	NSD_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	NSD_SYM2(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
	NSD_SYM(cuCtxSetCurrent, "cuCtxSetCurrent");
	NSD_SYM(cuCtxSynchronize, "cuCtxSynchronize");
	NSD_SYM(cuModuleLoadData, "cuModuleLoadData");
	NSD_SYM(cuModuleGetFunction, "cuModuleGetFunction");
	NSD_SYM(cuModuleUnload, "cuModuleUnload");
	NSD_SYM(cuFuncGetAttribute, "cuFuncGetAttribute");
	NSD_SYM(cuFuncSetAttribute, "cuFuncSetAttribute");
	NSD_SYM(cuStreamCreate, "cuStreamCreate");
	NSD_SYM2(cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
	NSD_SYM(cuStreamSynchronize, "cuStreamSynchronize");
	NSD_SYM(cuStreamWaitEvent, "cuStreamWaitEvent");
	NSD_SYM(cuLaunchKernel, "cuLaunchKernel");
	NSD_SYM(cuEventCreate, "cuEventCreate");
	NSD_SYM(cuEventRecord, "cuEventRecord");
	NSD_SYM(cuEventSynchronize, "cuEventSynchronize");
	NSD_SYM2(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
	NSD_SYM2(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
	NSD_SYM2(cuMemAlloc, "cuMemAlloc_v2", "cuMemAlloc");
	NSD_SYM2(cuMemFree, "cuMemFree_v2", "cuMemFree");
	NSD_SYM2(cuMemAllocHost, "cuMemAllocHost_v2", "cuMemAllocHost");
	NSD_SYM(cuMemFreeHost, "cuMemFreeHost");
	NSD_SYM2(cuMemcpyDtoH, "cuMemcpyDtoH_v2", "cuMemcpyDtoH");
	NSD_SYM2(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync");
	NSD_SYM2(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync");
	NSD_SYM2(cuMemGetInfo, "cuMemGetInfo_v2", "cuMemGetInfo");
	NSD_SYM2(cuMemsetD8, "cuMemsetD8_v2", "cuMemsetD8");
	NSD_SYM(cuMemsetD8Async, "cuMemsetD8Async");
	NSD_SYM(cuGetErrorString, "cuGetErrorString");
	NSD_SYM(cuGetErrorName, "cuGetErrorName");
#undef NSD_SYM2
#undef NSD_SYM
	return 0;
}

static inline void nsd_cuda_close(nsd_cuda *d) {
	if (d->lib != NULL) {
		dlclose(d->lib);
		d->lib = NULL;
	}
}

// Calls through the looked-up pointers (cgo cannot call a C function
// pointer itself).
static inline CUresult nsd_init(nsd_cuda *d) { return d->cuInit(0); }
static inline CUresult nsd_driver_version(nsd_cuda *d, int *v) { return d->cuDriverGetVersion(v); }
static inline CUresult nsd_device_count(nsd_cuda *d, int *n) { return d->cuDeviceGetCount(n); }
static inline CUresult nsd_device_get(nsd_cuda *d, CUdevice *dev, int ordinal) { return d->cuDeviceGet(dev, ordinal); }
static inline CUresult nsd_device_name(nsd_cuda *d, char *name, int len, CUdevice dev) { return d->cuDeviceGetName(name, len, dev); }
static inline CUresult nsd_device_bus_id(nsd_cuda *d, char *id, int len, CUdevice dev) { return d->cuDeviceGetPCIBusId(id, len, dev); }
static inline CUresult nsd_device_attr(nsd_cuda *d, int *v, int attr, CUdevice dev) { return d->cuDeviceGetAttribute(v, attr, dev); }
static inline CUresult nsd_func_attr(nsd_cuda *d, int *v, int attr, CUfunction f) { return d->cuFuncGetAttribute(v, attr, f); }
static inline CUresult nsd_func_set_attr(nsd_cuda *d, CUfunction f, int attr, int v) { return d->cuFuncSetAttribute(f, attr, v); }
static inline CUresult nsd_mem_zero(nsd_cuda *d, CUdeviceptr p, size_t n) { return d->cuMemsetD8(p, 0, n); }
static inline CUresult nsd_ctx_retain(nsd_cuda *d, CUcontext *ctx, CUdevice dev) { return d->cuDevicePrimaryCtxRetain(ctx, dev); }
static inline CUresult nsd_ctx_release(nsd_cuda *d, CUdevice dev) { return d->cuDevicePrimaryCtxRelease(dev); }
static inline CUresult nsd_ctx_set(nsd_cuda *d, CUcontext ctx) { return d->cuCtxSetCurrent(ctx); }
static inline CUresult nsd_ctx_sync(nsd_cuda *d) { return d->cuCtxSynchronize(); }
static inline CUresult nsd_module_load(nsd_cuda *d, CUmodule *m, const void *image) { return d->cuModuleLoadData(m, image); }
static inline CUresult nsd_module_function(nsd_cuda *d, CUfunction *f, CUmodule m, const char *name) { return d->cuModuleGetFunction(f, m, name); }
static inline CUresult nsd_module_unload(nsd_cuda *d, CUmodule m) { return d->cuModuleUnload(m); }
static inline CUresult nsd_stream_create(nsd_cuda *d, CUstream *s) { return d->cuStreamCreate(s, 1); } // CU_STREAM_NON_BLOCKING
static inline CUresult nsd_stream_destroy(nsd_cuda *d, CUstream s) { return d->cuStreamDestroy(s); }
static inline CUresult nsd_stream_sync(nsd_cuda *d, CUstream s) { return d->cuStreamSynchronize(s); }
static inline CUresult nsd_stream_wait(nsd_cuda *d, CUstream s, CUevent e) { return d->cuStreamWaitEvent(s, e, 0); }
static inline CUresult nsd_event_create(nsd_cuda *d, CUevent *e, int timing) { return d->cuEventCreate(e, timing ? 0 : 2); } // CU_EVENT_DISABLE_TIMING
static inline CUresult nsd_event_record(nsd_cuda *d, CUevent e, CUstream s) { return d->cuEventRecord(e, s); }
static inline CUresult nsd_event_sync(nsd_cuda *d, CUevent e) { return d->cuEventSynchronize(e); }
static inline CUresult nsd_event_elapsed(nsd_cuda *d, float *ms, CUevent a, CUevent b) { return d->cuEventElapsedTime(ms, a, b); }
static inline CUresult nsd_event_destroy(nsd_cuda *d, CUevent e) { return d->cuEventDestroy(e); }
static inline CUresult nsd_mem_alloc(nsd_cuda *d, CUdeviceptr *p, size_t n) { return d->cuMemAlloc(p, n); }
static inline CUresult nsd_mem_free(nsd_cuda *d, CUdeviceptr p) { return d->cuMemFree(p); }
static inline CUresult nsd_host_alloc(nsd_cuda *d, void **p, size_t n) { return d->cuMemAllocHost(p, n); }
static inline CUresult nsd_host_free(nsd_cuda *d, void *p) { return d->cuMemFreeHost(p); }
static inline CUresult nsd_mem_info(nsd_cuda *d, size_t *free_bytes, size_t *total) { return d->cuMemGetInfo(free_bytes, total); }
static inline CUresult nsd_copy_dtoh(nsd_cuda *d, void *dst, CUdeviceptr src, size_t n) { return d->cuMemcpyDtoH(dst, src, n); }
static inline CUresult nsd_copy_dtoh_async(nsd_cuda *d, void *dst, CUdeviceptr src, size_t n, CUstream s) { return d->cuMemcpyDtoHAsync(dst, src, n, s); }
static inline CUresult nsd_memset_async(nsd_cuda *d, CUdeviceptr p, size_t n, CUstream s) { return d->cuMemsetD8Async(p, 0, n, s); }
static inline CUresult nsd_copy_htod_async(nsd_cuda *d, CUdeviceptr dst, const void *src, size_t n, CUstream s) { return d->cuMemcpyHtoDAsync(dst, src, n, s); }

// nsd_launch starts spin(ns, stamps, slot) on grid blocks of block
// threads with shared bytes of dynamic shared memory.
static inline CUresult nsd_launch(nsd_cuda *d, CUfunction f, unsigned int grid, unsigned int block, unsigned int shared,
                           CUstream s, unsigned long long ns, unsigned long long stamps, unsigned long long slot) {
	void *args[3] = {&ns, &stamps, &slot};
	return d->cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, s, args, NULL);
}

// nsd_launch_probe starts timer_step(out, reads): a pointer and a 32-bit
// count.
static inline CUresult nsd_launch_probe(nsd_cuda *d, CUfunction f, CUstream s, unsigned long long out, unsigned int reads) {
	void *args[2] = {&out, &reads};
	return d->cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

static inline const char *nsd_error_text(nsd_cuda *d, CUresult r, int name) {
	const char *s = NULL;
	CUresult e = name ? d->cuGetErrorName(r, &s) : d->cuGetErrorString(r, &s);
	return e == 0 ? s : NULL;
}

// nsd_host_word reads word i of page-locked host memory the GPU writes.
static inline unsigned long long nsd_host_word(void *p, int i) {
	return ((volatile unsigned long long *)p)[i];
}

static inline void nsd_host_zero(void *p, size_t n) { memset(p, 0, n); }

#endif
