package classify

// baseText says what a sync is, in no framework's words; {call} becomes
// the sync's calls.
var baseText = map[topic]string{
	tOther:      "{call} blocked the host.",
	tDeviceSync: "{call} waits for every stream of the device.",
	tStreamSync: "{call} blocks the host until the stream drains.",
	tEventSync:  "{call} blocks the host until an event completes.",
	tFree:       "{call} frees device memory, which waits for the whole device.",
	tFreeHost:   "{call} frees pinned host memory, which waits for the device.",
	tHtoD:       "{call} copies to the GPU from memory the host then waits on (pageable memory, or a copy followed by a wait).",
	tDtoH:       "{call} copies data back to the host and waits for it.",
	tDtoHPinned: "{call} copies into pinned host memory and then waits for the stream.",
	tScalar:     "{call} reads at most 8 bytes back: a flag, a count or a scalar such as a residual or a reduction's result.",
	tBranch:     "{call} reads a GPU value that decides what the host does next (a convergence test, a loop's condition).",
	tShape:      "{call} reads the size of an output computed on the GPU.",
	tLog:        "{call} reads a value only to print or log it.",
	tMemset:     "{call} blocked the host: a memset of host or managed memory, or one on the legacy default stream, waits for earlier work.",
}

// dialectText is the rewrite of a topic in a dialect's words; "" where
// none applies.
func dialectText(d dialect, tp topic) string {
	if d == dTorch {
		return torchFallback[tp]
	}
	if tp == tFreeHost {
		return "Allocate pinned buffers once and free them at exit; at tear-down there is nothing to change."
	}
	if text, ok := dialectTexts[d][tp]; ok {
		return text
	}
	return cudaTexts[tp]
}

// torchFallback completes PyTorch fixes where no rule's text applies.
var torchFallback = map[topic]string{
	tFreeHost: "Allocate pinned buffers once (`pin_memory()` on a reused tensor) and free them at exit; at tear-down there is nothing to change.",
	tMemset:   "Use `torch.zeros`/`fill_` on the GPU stream of the work that follows.",
	tScalar:   "Profile with --python-backtrace=cuda to see the line that reads it.",
}

// cudaTexts are the rewrites for CUDA C/C++ (and the fallback of every
// other dialect).
var cudaTexts = map[topic]string{
	tDeviceSync: "Unless it times GPU work or guards a host read of a result, remove it from the loop: order streams with `cudaEventRecord` + `cudaStreamWaitEvent`, time with CUDA events read once at the end, and wait with `cudaStreamSynchronize` only on the stream whose result the host reads.",
	tStreamSync: "If the host reads nothing produced on that stream, order streams on the GPU (`cudaEventRecord` + `cudaStreamWaitEvent`); otherwise wait on an event recorded right after the work the host needs.",
	tEventSync:  "For GPU-side ordering use `cudaStreamWaitEvent`; for timing, read the events (`cudaEventElapsedTime`) once after the loop instead of every iteration.",
	tFree:       "Allocate once outside the loop and reuse the buffer, or use the stream-ordered allocator (`cudaMallocAsync`/`cudaFreeAsync` with a memory pool); frees at exit cost nothing to fix.",
	tHtoD:       "Copy from pinned memory (`cudaHostAlloc`/`cudaMallocHost`, allocated once) with `cudaMemcpyAsync` on a stream, so the host goes on.",
	tDtoH:       "If the host uses the data (a result it reads), the copy is needed, but in a loop the host need not wait for this step's: copy with `cudaMemcpyAsync` into two `cudaHostAlloc` buffers in turn, record an event after each, and use step i-1's data (`cudaEventSynchronize` on its event) while step i runs. Data the host reads only later needs no wait here: wait on an event where it is read, or gather several results into one copy.",
	tDtoHPinned: "Keep the `cudaMemcpyAsync`, drop the wait after it, and `cudaEventSynchronize` on an event recorded after the copy only where the host reads the data.",
	tScalar:     "If it decides a branch (a convergence test), check every N iterations or keep the decision on the GPU; if it is only printed, read it less often. Profile with `--cudabacktrace=all` and `-s cpu` to see which line makes it.",
	tBranch:     "Check every N iterations instead of every one, or keep the decision on the GPU (a device-side flag the next kernel reads).",
	tShape:      "Use a fixed upper bound for the output size and read the count less often.",
	tLog:        "Keep the values on the GPU and copy them back once every N iterations.",
	tMemset:     "Use `cudaMemsetAsync` on the stream of the work that follows (not the legacy default stream), on device memory.",
}

// dialectTexts override cudaTexts per dialect.
var dialectTexts = map[dialect]map[topic]string{
	dMPI: {
		tHtoD: "If the data comes from an MPI receive, use CUDA-aware MPI (pass device buffers to `MPI_Recv`/`MPI_Irecv`) and skip the copy; otherwise copy from pinned memory (`cudaHostAlloc`) with `cudaMemcpyAsync`.",
		tDtoH: "If the host uses the data or sends it with MPI, the copy is needed: with CUDA-aware MPI pass the device buffer to `MPI_Send`/`MPI_Isend` and skip it, or copy with `cudaMemcpyAsync` into `cudaHostAlloc` memory and overlap the copy with other work (`MPI_Isend` once an event says it is done).",
	},
	dOpenACC: {
		tDeviceSync: "In OpenACC this is a `wait` or the implicit wait at the end of a compute construct or `update`: add `async(n)` to the `parallel`/`kernels` and `update` directives and put `#pragma acc wait(n)` (`!$acc wait(n)`) only where the host reads the data.",
		tStreamSync: "In OpenACC this is the implicit wait at the end of a compute construct, a `data` region or an `update`: add `async(n)` to those directives and `#pragma acc wait(n)` only where the host reads the data. Profile with `-t openacc` to see which directive (file and line) it is.",
		tEventSync:  "In OpenACC this is an `acc wait` on an async queue: wait only where the host reads the data, and queue independent work on other `async(n)` queues.",
		tFree:       "Device memory is freed at the end of a `data` region or by `exit data delete`: open the data region once, outside the loop.",
		tHtoD:       "Keep the arrays on the device across iterations (`#pragma acc data copyin(...)` or `enter data` outside the loop) and refresh them with `update device(...) async(n)`; `-gpu=pinned` makes host arrays pinned.",
		tDtoH:       "If the host uses the data (a result it reads or writes out), the copy is needed; otherwise move `update self(...)`/`copyout` out of the loop, or make it `async(n)` with a `wait(n)` where it is read.",
		tDtoHPinned: "Make the `update self(...)` `async(n)` and `wait(n)` only where the host reads the data.",
		tScalar:     "A `reduction` result or a scalar the host reads (an error norm, a convergence test) waits for the kernel: test it every N iterations, or keep the loop's test on the device. Profile with `-t openacc` to see the directive.",
		tBranch:     "Test the value every N iterations, or keep the loop's test on the device.",
		tMemset:     "Profile with `-t openacc` to see which directive made it; an `async(n)` clause keeps it on a queue.",
	},
	dOpenMP: {
		tDeviceSync: "In OpenMP offload this is the implicit wait at the end of a `target` region or `target update`: add `nowait`, order the regions with `depend(...)` clauses, and `#pragma omp taskwait` only where the host reads the data.",
		tStreamSync: "In OpenMP offload this is the implicit wait at the end of a `target` region, `target update` or `map`: add `nowait` with `depend(...)` clauses and `#pragma omp taskwait` only where the host reads the data. Profile with `-t openmp` to see the region.",
		tEventSync:  "Order `target ... nowait` regions with `depend(...)` instead of waiting on the host.",
		tFree:       "`target exit data` or the end of a `target data` region frees device memory: map the arrays once, outside the loop (`target enter data`).",
		tHtoD:       "Map the arrays once outside the loop (`#pragma omp target data map(to: ...)` or `target enter data`) and refresh them with `target update to(...) nowait`.",
		tDtoH:       "If the host uses the data (a result it reads or writes out), the copy is needed; otherwise move `target update from(...)`/`map(from: ...)` out of the loop, or make it `nowait` with `depend(...)` and wait where it is read.",
		tDtoHPinned: "Make the `target update from(...)` `nowait` and wait (`taskwait`) only where the host reads the data.",
		tScalar:     "A `reduction` result mapped back each iteration (an error norm, a convergence test) waits for the kernel: test it every N iterations. Profile with `-t openmp` to see the region.",
		tBranch:     "Test the value every N iterations, or keep the loop's test on the device.",
		tMemset:     "Profile with `-t openmp` to see which region made it.",
	},
	dCuPy: {
		tDeviceSync: "This is `cupy.cuda.Device().synchronize()` or `cupy.cuda.runtime.deviceSynchronize()`: remove it from the loop, order streams with `stream.wait_event(event)`, and time with `cupy.cuda.Event` pairs read once at the end (`cupy.cuda.get_elapsed_time`).",
		tStreamSync: "This is `stream.synchronize()` or a blocking host read: for GPU-side ordering use `stream.wait_event(event)`; keep host waits for results the host reads.",
		tEventSync:  "This is `event.synchronize()`: order streams with `stream.wait_event(event)`, and read timings once after the loop.",
		tFree:       "CuPy's memory pool keeps freed blocks; a device free here means the pool released them (`free_all_blocks()`) or an allocation retried after a failure: do not empty the pool in the loop.",
		tHtoD:       "`cupy.asarray(host_array)` copies from pageable memory: stage the data in pinned memory (`cupy.cuda.alloc_pinned_memory`) and copy with `ndarray.set(host, stream=s)`, or build the array on the GPU.",
		tDtoH:       "`cupy.asnumpy(x)` / `x.get()` waits. If the host uses the data, the copy is needed, but in a loop it can use step i-1's: copy into two pinned buffers in turn (`cupyx.empty_pinned`) with `x.get(stream=s, out=buf, blocking=False)` (CuPy 13+) and an event, and synchronize the older event where it is read. Data read only later needs no wait here: synchronize where it is read.",
		tDtoHPinned: "Copy with `cupy.asnumpy(x, stream=s, blocking=False)` (CuPy 13+) and synchronize the stream only where the host reads the data.",
		tScalar:     "`float(x)`, `int(x)` or `bool(x)` of a CuPy array reads it back: if it is only logged, keep the values on the GPU and read them every N steps; if it decides a branch, check less often or decide on the GPU (`cupy.where`). Profile with `--python-backtrace=cuda` to see the line.",
		tBranch:     "Decide on the GPU instead (`cupy.where`), or check only every N steps.",
		tShape:      "Keep shapes fixed (`cupy.where(mask, x, 0)`) or compute the size less often.",
		tLog:        "Keep the values on the GPU (`cupy.stack` them) and read them back once every N steps.",
		tMemset:     "Fill on the GPU stream of the work that follows (`x.fill(0)` or `cupy.zeros` under `with stream:`).",
	},
	dJAX: {
		tDeviceSync: "This is `x.block_until_ready()` / `jax.block_until_ready(...)` or a host read (`jax.device_get`, `float(x)`, `np.asarray(x)`): call it once after the loop (or only to time a step), and keep values as `jax.Array` between steps.",
		tStreamSync: "This is `x.block_until_ready()` or a host read (`jax.device_get`, `float(x)`, `np.asarray(x)`): move it out of the step loop, or read every N steps; set-up and tear-down waits (NCCL, compilation) cost nothing to fix.",
		tEventSync:  "This is `block_until_ready()` or a host read: move it out of the step loop, or read every N steps.",
		tFree:       "XLA's allocator frees device memory at tear-down or when a buffer is deleted: at exit there is nothing to change; in the loop, reuse buffers (`donate_argnums`).",
		tHtoD:       "`jnp.asarray(host_array)` / `jax.device_put` copies from pageable memory: put the data on the device once, or prefetch the next batch with `jax.device_put` while the step runs.",
		tDtoH:       "`jax.device_get(x)` / `np.asarray(x)` waits for the step. If the host uses the data at once, that is needed; otherwise start the copy early (`x.copy_to_host_async()`) and read it later, or fetch several steps' values together.",
		tDtoHPinned: "Start the copy early (`x.copy_to_host_async()`) and read it where the host needs it.",
		tScalar:     "`float(loss)` or `int(x)` each step waits for the step: keep the value on the device and read it every N steps.",
		tBranch:     "Decide on the device (`jnp.where`, `jax.lax.cond`, `jax.lax.while_loop`), or check only every N steps.",
		tShape:      "Keep shapes static (`jnp.where(mask, x, 0)`, `size=` of `jnp.nonzero`) so the host need not read the size.",
		tLog:        "Keep the values on the device and read them back once every N steps.",
	},
	dRAPIDS: {
		tStreamSync: "cuDF waits inside operations that return host values (`len()`, `.to_pandas()`, `.values_host`, a scalar of a reduction) and between libcudf calls: keep data in cuDF between operations and convert to the host once.",
		tFree:       "Use an RMM pool (`rmm.reinitialize(pool_allocator=True)`) so that frees do not reach the device allocator in the loop.",
		tHtoD:       "`cudf.from_pandas`/`cudf.Series(host_data)` copies from pageable memory: read the data straight to the GPU (`cudf.read_parquet`, `cudf.read_csv`) or convert once.",
		tDtoH:       "`.to_pandas()`, `.values_host` or `.to_numpy()` waits. If the host uses the data, that is needed; otherwise keep it in cuDF and convert once at the end.",
		tScalar:     "A scalar read back (`len(df)`, `series.sum()` used on the host) waits: keep it on the GPU or read it less often.",
	},
}
