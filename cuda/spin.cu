// spin.cu: the GPU stand-in for a recorded GPU op.
//
// The replay does not run the recorded kernels; it runs `spin` for each
// recorded op's duration. A spin occupies its stream for that long by
// polling the GPU's global nanosecond timer (%globaltimer), so stream
// order, cross-stream waits and host syncs behave as in the recording.
//
// Launch shape: one block of 32 threads (one warp). A warp is the
// smallest unit the GPU schedules, so a spin holds one SM slot and no
// more: spins on different streams run side by side, as the recorded ops
// of concurrent streams overlapped in the trace, and no spin waits for
// another to free the GPU. (The recorded durations already include any
// slowdown the real ops suffered from sharing the GPU.)
//
// Regenerate the PTX with `make ptx` (nvcc -ptx for a portable virtual
// architecture; the driver JIT-compiles it for the GPU it runs on).

static __device__ __forceinline__ unsigned long long globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// spin keeps its stream busy for ns nanoseconds. When stamps is not null
// (calibration only), thread 0 writes the start time to stamps[0] as soon
// as it runs and the end time to stamps[1] when it leaves; stamps may
// point to page-locked host memory, which the host polls.
extern "C" __global__ void spin(unsigned long long ns, unsigned long long *stamps)
{
    const unsigned long long start = globaltimer();
    if (stamps != 0 && threadIdx.x == 0) {
        *(volatile unsigned long long *)&stamps[0] = start;
        __threadfence_system();
    }
    unsigned long long now = start;
    while (now - start < ns) {
        now = globaltimer();
    }
    if (stamps != 0 && threadIdx.x == 0) {
        *(volatile unsigned long long *)&stamps[1] = now;
        __threadfence_system();
    }
}

// timer_step writes to out[0] the smallest step of %globaltimer seen in
// `reads` consecutive reads: the timer's resolution on this GPU, which
// bounds how exactly a spin can match a duration.
extern "C" __global__ void timer_step(unsigned long long *out, unsigned int reads)
{
    unsigned long long prev = globaltimer();
    unsigned long long best = ~0ull;
    for (unsigned int i = 0; i < reads; i++) {
        const unsigned long long now = globaltimer();
        if (now != prev) {
            if (now - prev < best) {
                best = now - prev;
            }
            prev = now;
        }
    }
    if (threadIdx.x == 0) {
        out[0] = best;
    }
}
