// fakenvml.c: a stand-in for libnvidia-ml.so.1, built by the cuda
// package's tests (driver_cgo_test.go) so that go-nvml's dlopen finds it
// on LD_LIBRARY_PATH: the package's real NVML path — go-nvml's loading,
// its lazily bound calls, the bus-id lookup — runs without a GPU. It has
// one GPU, on the bus id the fake libcuda.so.1 reports, at 1755 of 1980
// MHz, idle and held by a software power cap (read through the clock
// event reasons of drivers since 535; it lacks the older throttle-reason
// call). FAKENVML_NO_BUS=1 makes the bus-id lookup fail, so that the
// device is found by index.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SUCCESS = 0, ERROR_INVALID_ARGUMENT = 2, ERROR_UNINITIALIZED = 1, ERROR_NOT_FOUND = 6 };
enum { CLOCK_SM = 1 };

static int initialized; // nvmlInit calls not yet shut down
static int device;      // the one GPU's handle points here

int nvmlInit_v2(void) { initialized++; return SUCCESS; }
int nvmlShutdown(void) {
	if (initialized == 0) return ERROR_UNINITIALIZED;
	initialized--;
	return SUCCESS;
}
const char *nvmlErrorString(int r) { return r == ERROR_NOT_FOUND ? "Not Found" : "fake NVML error"; }

#define NEED_INIT() do { if (initialized == 0) return ERROR_UNINITIALIZED; } while (0)
#define NEED_DEVICE(d) do { NEED_INIT(); if ((d) != &device) return ERROR_INVALID_ARGUMENT; } while (0)

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d) {
	NEED_INIT();
	if (i != 0) return ERROR_INVALID_ARGUMENT;
	*d = &device;
	return SUCCESS;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **d) {
	NEED_INIT();
	const char *off = getenv("FAKENVML_NO_BUS");
	if ((off != NULL && strcmp(off, "1") == 0) || strcmp(bus, "0000:00:06.0") != 0) return ERROR_NOT_FOUND;
	*d = &device;
	return SUCCESS;
}
int nvmlDeviceGetName(void *d, char *s, unsigned int n) { NEED_DEVICE(d); snprintf(s, n, "Fake Driver GPU"); return SUCCESS; }
int nvmlSystemGetDriverVersion(char *s, unsigned int n) { NEED_INIT(); snprintf(s, n, "999.1"); return SUCCESS; }
int nvmlDeviceGetClockInfo(void *d, int t, unsigned int *mhz) {
	NEED_DEVICE(d);
	if (t != CLOCK_SM) return ERROR_INVALID_ARGUMENT;
	*mhz = 1755;
	return SUCCESS;
}
int nvmlDeviceGetMaxClockInfo(void *d, int t, unsigned int *mhz) {
	NEED_DEVICE(d);
	if (t != CLOCK_SM) return ERROR_INVALID_ARGUMENT;
	*mhz = 1980;
	return SUCCESS;
}
int nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *r) {
	NEED_DEVICE(d);
	*r = 0x1 | 0x4; // idle, software power cap
	return SUCCESS;
}
