// spin.cu: the GPU stand-in for a recorded GPU op.
//
// The replay does not run the recorded kernels; it runs `spin` for each
// recorded op's duration. A spin occupies its stream for that long by
// polling the GPU's global nanosecond timer (%globaltimer), so stream
// order, cross-stream waits and host syncs behave as in the recording.
//
// Launch shape: the recorded kernel's block size, one wave of its grid,
// and dynamic shared memory (unused) sized so that as many blocks fit on
// an SM as of the recorded kernel: a spin holds the share of the GPU the
// recorded kernel held, so spins of concurrent streams overlap as the
// recorded kernels could (see occupancy.go). An op without a recorded
// launch (a memset, a graph, an old export) is one block of one warp.
//
// Regenerate the PTX with `make ptx` (nvcc -ptx for a portable virtual
// architecture; the driver JIT-compiles it for the GPU it runs on).

static __device__ __forceinline__ unsigned long long globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// spin keeps its stream busy for ns nanoseconds from the start of its
// first block. A grid of more than one block needs slot: two words of
// device memory, zero before the launch, that no other kernel uses while
// this one runs (one pair per stream: a stream runs its kernels one after
// another). The first block to start writes its start time to slot[0];
// every block spins until that start plus ns, so a block that starts late
// (another stream's kernel held the SMs) spins less, or not at all; the
// last block to leave sets both words back to zero for the stream's next
// spin. One thread of each block polls the timer; the others wait at the
// barrier, holding the block's share of the SM.
//
// When stamps is not null (calibration only, one block), thread 0 writes
// the start time to stamps[0] as soon as it runs and the end time to
// stamps[1] when it leaves; stamps may point to page-locked host memory,
// which the host polls.
extern "C" __global__ void spin(unsigned long long ns, unsigned long long *stamps, unsigned long long *slot)
{
    if (threadIdx.x == 0) {
        const unsigned long long now = globaltimer();
        unsigned long long start = now;
        if (slot != 0) {
            const unsigned long long first = atomicCAS(&slot[0], 0ull, now);
            if (first != 0ull) {
                start = first;
            }
        }
        if (stamps != 0 && blockIdx.x == 0) {
            *(volatile unsigned long long *)&stamps[0] = start;
            __threadfence_system();
        }
        unsigned long long t = now;
        while (t < start + ns) {
            t = globaltimer();
        }
        if (stamps != 0 && blockIdx.x == 0) {
            *(volatile unsigned long long *)&stamps[1] = t;
            __threadfence_system();
        }
        if (slot != 0 && atomicAdd(&slot[1], 1ull) == (unsigned long long)gridDim.x - 1) {
            slot[0] = 0ull;
            slot[1] = 0ull;
        }
    }
    __syncthreads();
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
