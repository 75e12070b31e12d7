// nsd_nvml.h: the few NVML calls the cuda package makes to name the GPU
// and read its clocks, loaded at run time with dlopen (libnvidia-ml.so.1
// ships with the driver), so that building needs no CUDA toolkit.
#ifndef NSD_NVML_H
#define NSD_NVML_H

#include <dlfcn.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*byIndex)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*byBusID)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*driverVersion)(char *, unsigned int);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*maxClock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
	const char *(*errorString)(nvmlReturn_t);
} nsd_nvml;

enum { NSD_NVML_CLOCK_SM = 1 };

// nsd_nvml_open fills n from libnvidia-ml.so.1: 0, 1 when the library is
// absent, 2 when a symbol is missing (err names it).
static inline int nsd_nvml_open(nsd_nvml *n, char *err, size_t errlen) {
	memset(n, 0, sizeof *n);
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (n->lib == NULL) {
		const char *e = dlerror();
		strncpy(err, e ? e : "dlopen failed", errlen - 1);
		return 1;
	}
#define NSD_NVML_SYM(field, sym) \
	do { \
		*(void **)(&n->field) = dlsym(n->lib, sym); \
		if (n->field == NULL) { strncpy(err, sym, errlen - 1); dlclose(n->lib); n->lib = NULL; return 2; } \
	} while (0)
	NSD_NVML_SYM(init, "nvmlInit_v2");
	NSD_NVML_SYM(shutdown, "nvmlShutdown");
	NSD_NVML_SYM(byIndex, "nvmlDeviceGetHandleByIndex_v2");
	NSD_NVML_SYM(byBusID, "nvmlDeviceGetHandleByPciBusId_v2");
	NSD_NVML_SYM(name, "nvmlDeviceGetName");
	NSD_NVML_SYM(driverVersion, "nvmlSystemGetDriverVersion");
	NSD_NVML_SYM(clock, "nvmlDeviceGetClockInfo");
	NSD_NVML_SYM(maxClock, "nvmlDeviceGetMaxClockInfo");
	NSD_NVML_SYM(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
	NSD_NVML_SYM(errorString, "nvmlErrorString");
#undef NSD_NVML_SYM
	return 0;
}

static inline void nsd_nvml_close(nsd_nvml *n) {
	if (n->lib != NULL) {
		dlclose(n->lib);
		n->lib = NULL;
	}
}

static inline nvmlReturn_t nsd_nvml_init(nsd_nvml *n) { return n->init(); }
static inline nvmlReturn_t nsd_nvml_shutdown(nsd_nvml *n) { return n->shutdown(); }
static inline nvmlReturn_t nsd_nvml_by_index(nsd_nvml *n, unsigned int i, nvmlDevice_t *d) { return n->byIndex(i, d); }
static inline nvmlReturn_t nsd_nvml_by_bus(nsd_nvml *n, const char *bus, nvmlDevice_t *d) { return n->byBusID(bus, d); }
static inline nvmlReturn_t nsd_nvml_name(nsd_nvml *n, nvmlDevice_t d, char *s, unsigned int len) { return n->name(d, s, len); }
static inline nvmlReturn_t nsd_nvml_driver(nsd_nvml *n, char *s, unsigned int len) { return n->driverVersion(s, len); }
static inline nvmlReturn_t nsd_nvml_sm_clock(nsd_nvml *n, nvmlDevice_t d, unsigned int *mhz) { return n->clock(d, NSD_NVML_CLOCK_SM, mhz); }
static inline nvmlReturn_t nsd_nvml_sm_max_clock(nsd_nvml *n, nvmlDevice_t d, unsigned int *mhz) { return n->maxClock(d, NSD_NVML_CLOCK_SM, mhz); }
static inline nvmlReturn_t nsd_nvml_throttle(nsd_nvml *n, nvmlDevice_t d, unsigned long long *mask) { return n->throttle(d, mask); }
static inline const char *nsd_nvml_error(nsd_nvml *n, nvmlReturn_t r) { return n->errorString(r); }

#endif
