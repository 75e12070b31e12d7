#!/usr/bin/env python3
"""Measure what Nsight Systems adds to each traced CUDA call of a PyTorch
program, per kind of call, and write it into an nsyssync calibration profile.

`nsyssync calibrate --profiler-overhead` measures the same with driver-API
calls of its own; PyTorch programs call the CUDA runtime API through
PyTorch's dispatcher, which nsys traces differently, so this script times
PyTorch's own calls:

  launch      x.add_(1) on a one-element CUDA tensor     (cudaLaunchKernel)
  async_copy  pinned.copy_(x, non_blocking=True), 4 bytes (cudaMemcpyAsync)
  sync        stream.synchronize() on an idle stream      (cudaStreamSynchronize)
  other       event.record(stream)                         (cudaEventRecord)

each in batches of back-to-back calls (the stream drained between batches,
untimed, with torch.cuda.synchronize()), in a child process without the
profiler, under `nsys profile`, and without it again. The profiled run is
exported and the traced calls of each kind's NVTX range counted, so that
the overhead is per traced call: (profiled - mean of the plain runs) per op,
divided by the traced calls per op (the drains' cudaDeviceSynchronize left
out).

    python3 scripts/profiler_overhead.py --nsys "$NSYS" -o overhead.json \
        [--merge h100.json] [--nsys-flags "-t cuda,nvtx -s none --cpuctxsw=none"]

With --workload loop it times a small training loop instead (an embedding,
two residual MLP blocks with LayerNorm and GELU, a classifier, cross
entropy, AdamW; batch 32 x 16 tokens): LOOP_STEPS steps in batches of 10,
without the profiler, under it and without it again, and the traced calls
per step counted in its NVTX range: the wall-clock cost per traced call of
a real PyTorch step, Python dispatch and all, which the microbenchmark's
back-to-back calls understate. It sets the flat profiler_overhead_ns only
(every kind takes it).

--merge copies a profile of `nsyssync calibrate` and sets its profiler
overhead fields; without it the profile holds only those. The raw numbers
go to the profile's "profiler_overhead_measurement" key (ignored by
nsyssync).
"""
import argparse
import json
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

KINDS = ("launch", "async_copy", "sync", "other")
BATCH = 100


def worker(out, calls):
    import torch

    batches = max(1, -(-calls // BATCH))
    stream = torch.cuda.current_stream()
    x = torch.zeros(1, device="cuda")
    pinned = torch.empty(1, pin_memory=True)
    ev = torch.cuda.Event()
    ops = {
        "launch": lambda: x.add_(1.0),
        "async_copy": lambda: pinned.copy_(x, non_blocking=True),
        "sync": stream.synchronize,
        "other": lambda: ev.record(stream),
    }
    for _ in range(20):  # CUDA context, kernels, caching allocator
        for op in ops.values():
            op()
    torch.cuda.synchronize()
    result = {"calls": batches * BATCH, "per_op_ns": {}, "ops_in_range": {}}
    for kind, op in ops.items():
        torch.cuda.nvtx.range_push("overhead:" + kind)
        per = []
        for b in range(-1, batches):  # one untimed batch first
            t0 = time.perf_counter_ns()
            for _ in range(BATCH):
                op()
            el = time.perf_counter_ns() - t0
            torch.cuda.synchronize()
            if b >= 0:
                per.append(el / BATCH)
        torch.cuda.nvtx.range_pop()
        result["per_op_ns"][kind] = statistics.median(per)
        result["ops_in_range"][kind] = (batches + 1) * BATCH
    with open(out, "w") as f:
        json.dump(result, f)


LOOP_STEPS, LOOP_BATCH = 400, 10


def loop_worker(out):
    import torch

    torch.manual_seed(0)
    d, vocab = 64, 1000

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.up, self.down = torch.nn.LayerNorm(d), torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, h):
            return h + self.down(torch.nn.functional.gelu(self.up(self.norm(h))))

    model = torch.nn.Sequential(torch.nn.Embedding(vocab, d), Block(), Block()).cuda()
    head = torch.nn.Linear(d, 10).cuda()
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-3)
    tokens = torch.randint(0, vocab, (32, 16), device="cuda")
    labels = torch.randint(0, 10, (32,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(head(model(tokens).mean(1)), labels)
        loss.backward()
        opt.step()

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("overhead:loop")
    per = []
    for b in range(-1, LOOP_STEPS // LOOP_BATCH):
        t0 = time.perf_counter_ns()
        for _ in range(LOOP_BATCH):
            step()
        torch.cuda.synchronize()
        if b >= 0:
            per.append((time.perf_counter_ns() - t0) / LOOP_BATCH)
    torch.cuda.nvtx.range_pop()
    with open(out, "w") as f:
        json.dump({"per_step_ns": statistics.median(per), "steps_in_range": (LOOP_STEPS // LOOP_BATCH + 1) * LOOP_BATCH}, f)


def loop_calls_per_step(db, steps):
    """Traced CUDA API calls per step in the loop's NVTX range (its drains'
    synchronize calls left out)."""
    con = sqlite3.connect(db)
    start, end, tid = con.execute(
        """SELECT n.start, n."end", n.globalTid FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
           WHERE coalesce(n.text, s.value) = 'overhead:loop'""").fetchone()
    n = con.execute(
        """SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
           WHERE r.start >= ? AND r.start <= ? AND r.globalTid = ?
             AND s.value NOT LIKE 'cudaDeviceSynchronize%'""", (start, end, tid)).fetchone()[0]
    con.close()
    return n / steps


def run_worker(prefix, out, calls, mode="worker"):
    cmd = prefix + [sys.executable, os.path.abspath(__file__), mode, out, str(calls)]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if not os.path.exists(out):
        sys.exit("profiler_overhead: %s failed (exit %d): %s" % (cmd[0], p.returncode, p.stderr.strip()[-500:]))
    with open(out) as f:
        return json.load(f)


def traced_calls_per_op(db, ops_in_range):
    """Traced CUDA API calls per op in each kind's NVTX range, the drains'
    cudaDeviceSynchronize left out."""
    con = sqlite3.connect(db)
    per = {}
    for kind in KINDS:
        row = con.execute(
            """SELECT n.start, n."end", n.globalTid FROM NVTX_EVENTS n
               LEFT JOIN StringIds s ON s.id = n.textId
               WHERE coalesce(n.text, s.value) = ?""", ("overhead:" + kind,)).fetchone()
        if row is None:
            sys.exit("profiler_overhead: no NVTX range overhead:%s in the profiled run's export" % kind)
        start, end, tid = row
        n = con.execute(
            """SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
               WHERE r.start >= ? AND r.start <= ? AND r.globalTid = ?
                 AND s.value NOT LIKE 'cudaDeviceSynchronize%'""", (start, end, tid)).fetchone()[0]
        per[kind] = n / ops_in_range[kind]
    con.close()
    return per


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "worker":
        worker(sys.argv[2], int(sys.argv[3]))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "loop":
        loop_worker(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nsys", default="nsys")
    ap.add_argument("--nsys-flags", default="-t cuda,nvtx -s none --cpuctxsw=none")
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--merge", help="a profile of nsyssync calibrate to copy")
    ap.add_argument("--workload", choices=("calls", "loop"), default="calls")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    version = subprocess.run([a.nsys, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if a.workload == "loop":
        measure_loop(a, version)
        return
    with tempfile.TemporaryDirectory() as tmp:
        plain1 = run_worker([], os.path.join(tmp, "plain1.json"), a.calls)
        rep = os.path.join(tmp, "overhead")
        flags = shlex.split(a.nsys_flags)
        profiled = run_worker([a.nsys, "profile"] + flags + ["--force-overwrite=true", "-o", rep],
                              os.path.join(tmp, "profiled.json"), a.calls)
        plain2 = run_worker([], os.path.join(tmp, "plain2.json"), a.calls)
        db = os.path.join(tmp, "overhead.sqlite")
        subprocess.run([a.nsys, "export", "-q", "true", "--type", "sqlite", "-o", db, rep + ".nsys-rep"],
                       check=True, stdout=subprocess.DEVNULL)
        calls_per_op = traced_calls_per_op(db, profiled["ops_in_range"])
    import torch

    profile = {}
    if a.merge:
        with open(a.merge) as f:
            profile = json.load(f)
    measurement = {"nsys": version, "nsys_flags": a.nsys_flags, "calls": profiled["calls"],
                   "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "kinds": {}}
    overheads = {}
    for kind in KINDS:
        base = (plain1["per_op_ns"][kind] + plain2["per_op_ns"][kind]) / 2
        per_call = (profiled["per_op_ns"][kind] - base) / max(calls_per_op[kind], 1e-9)
        overheads[kind] = max(1, round(per_call))  # 0 would read as unknown
        measurement["kinds"][kind] = {"plain_ns": [plain1["per_op_ns"][kind], plain2["per_op_ns"][kind]],
                                      "profiled_ns": profiled["per_op_ns"][kind],
                                      "traced_calls_per_op": calls_per_op[kind], "overhead_ns": overheads[kind]}
        profile["profiler_overhead_%s_ns" % kind] = overheads[kind]
        print("%-10s plain %7.2f / %7.2f us  profiled %7.2f us  %.2f traced calls/op  overhead %6.2f us/call" % (
            kind, plain1["per_op_ns"][kind] / 1e3, plain2["per_op_ns"][kind] / 1e3, profiled["per_op_ns"][kind] / 1e3,
            calls_per_op[kind], overheads[kind] / 1e3))
    profile["profiler_overhead_ns"] = round(statistics.median(overheads.values()))
    note = "profiler overhead: scripts/profiler_overhead.py, PyTorch %s on %s, %s, `nsys profile %s`, %d calls a kind" % (
        torch.__version__, measurement["gpu"], version, a.nsys_flags, profiled["calls"])
    profile["source"] = (profile["source"] + "; " + note) if profile.get("source") else note
    profile["profiler_overhead_measurement"] = measurement
    with open(a.output, "w") as f:
        json.dump(profile, f, indent=2)
        f.write("\n")


def measure_loop(a, version):
    """--workload loop: the flat overhead per traced call of a training loop."""
    with tempfile.TemporaryDirectory() as tmp:
        plain1 = run_worker([], os.path.join(tmp, "plain1.json"), 0, "loop")
        rep = os.path.join(tmp, "loop")
        profiled = run_worker([a.nsys, "profile"] + shlex.split(a.nsys_flags) + ["--force-overwrite=true", "-o", rep],
                              os.path.join(tmp, "profiled.json"), 0, "loop")
        plain2 = run_worker([], os.path.join(tmp, "plain2.json"), 0, "loop")
        db = os.path.join(tmp, "loop.sqlite")
        subprocess.run([a.nsys, "export", "-q", "true", "--type", "sqlite", "-o", db, rep + ".nsys-rep"],
                       check=True, stdout=subprocess.DEVNULL)
        calls = loop_calls_per_step(db, profiled["steps_in_range"])
    import torch

    base = (plain1["per_step_ns"] + plain2["per_step_ns"]) / 2
    per_call = max(1, round((profiled["per_step_ns"] - base) / max(calls, 1e-9)))
    profile = {}
    if a.merge:
        with open(a.merge) as f:
            profile = json.load(f)
    for kind in KINDS:
        profile.pop("profiler_overhead_%s_ns" % kind, None)  # the flat value applies to every kind
    profile["profiler_overhead_ns"] = per_call
    note = ("profiler overhead: scripts/profiler_overhead.py --workload loop, PyTorch %s on %s, %s, `nsys profile %s`, "
            "%d steps of a training loop, %.1f traced calls a step" % (torch.__version__, torch.cuda.get_device_name(), version,
                                                                    a.nsys_flags, LOOP_STEPS, calls))
    profile["source"] = (profile["source"] + "; " + note) if profile.get("source") else note
    profile["profiler_overhead_measurement"] = {
        "nsys": version, "nsys_flags": a.nsys_flags, "workload": "loop", "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "steps": LOOP_STEPS,
        "plain_step_ns": [plain1["per_step_ns"], plain2["per_step_ns"]], "profiled_step_ns": profiled["per_step_ns"],
        "traced_calls_per_step": calls, "overhead_ns": per_call}
    print("loop: plain %.1f / %.1f us a step, profiled %.1f us, %.1f traced calls a step, overhead %.2f us/call" % (
        plain1["per_step_ns"] / 1e3, plain2["per_step_ns"] / 1e3, profiled["per_step_ns"] / 1e3, calls, per_call / 1e3))
    with open(a.output, "w") as f:
        json.dump(profile, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
