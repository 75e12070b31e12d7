# nsyssync — the README's quick start uses `make demo` and `make test`.
GO      ?= go
BIN     ?= bin/nsyssync
DEMO    ?= fixtures/syncs_backtrace.sqlite.gz
BENCHGB ?= 1

# go-nvml's C header marks calls that CUDA 13 deprecated; nsyssync does not
# call them, but cgo compiles a wrapper for each, and every fresh build
# would print a page of warnings. Go's default flags, less those warnings.
CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
export CGO_CFLAGS

.PHONY: build test race demo bench lint fmt-check vet clean check-html examples golden ptx gpu-test gpu-test-build

build:
	$(GO) build -o $(BIN) ./cmd/nsyssync

# All tests: unit tests, the real fixtures, the shared corpus (../shared/corpus
# when present) and the bad-input tests.
test:
	$(GO) test -count=1 ./...

demo: build
	$(BIN) analyze $(DEMO)

# Inventory benchmark on large exports generated from real ones (BENCHGB
# gigabytes, cached under /tmp): seconds, rows a second, peak memory, and the
# sqlite3 floor. docs/performance.md records the results.
bench:
	scripts/bench.sh $(BENCHGB)

# The tests again under the race detector (needs cgo and gcc).
race:
	$(GO) test -race -count=1 -timeout 30m ./...

lint: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The HTML report in headless Chromium (installs Debian's chromium when
# absent): screenshot and DOM checks, report/chromium_test.go.
check-html:
	bash scripts/check-html.sh

# Rewrites the golden files (report/testdata, triage/testdata) after an
# intended change to a report; review the diff.
golden:
	$(GO) test -count=1 ./report/ -run TestGolden -update
	$(GO) test -count=1 ./triage/ -run TestHostileTables -update

# The example reports linked from the README (docs/examples/).
examples: build
	$(BIN) analyze --nvtx measured --format html -o docs/examples/syncs_backtrace.html $(DEMO)
	$(BIN) analyze --nvtx measured --format markdown -o docs/examples/syncs_backtrace.md $(DEMO)
	$(BIN) analyze --nvtx measured --format perfetto -o docs/examples/syncs_backtrace.perfetto.json $(DEMO)
	NO_COLOR=1 COLUMNS=100 $(BIN) analyze --nvtx measured --top 5 $(DEMO) > docs/examples/syncs_backtrace.txt

# The GPU replay's spin kernel (cuda/spin.cu) as PTX, on a machine with
# nvcc (the GPU machine): for a virtual architecture the driver
# JIT-compiles for the GPU at hand. compute_75 (Turing) is the oldest CUDA
# 13's nvcc accepts; with CUDA 12, PTX_ARCH=compute_70 reaches Volta.
NVCC     ?= nvcc
PTX_ARCH ?= compute_75

ptx:
	$(NVCC) -ptx -arch=$(PTX_ARCH) -o cuda/spin.ptx cuda/spin.cu

# The GPU tests (go test ./cuda/ -run '^TestGPU') with the driver present: a
# missing GPU fails them (NSYSSYNC_GPU_TEST=1) instead of skipping. Where
# Go is, the test binary is built first; a GPU machine without Go runs
# the bin/cuda.test built elsewhere (make gpu-test-build, then carry bin/).
# NSYSSYNC_GPU_OUT=DIR keeps what they measure (JSON, the ground-truth table).
gpu-test-build:
	$(GO) test -c -o bin/cuda.test ./cuda/
	$(GO) build -o $(BIN) ./cmd/nsyssync

gpu-test:
	@if command -v $(GO) >/dev/null 2>&1; then $(MAKE) gpu-test-build; fi
	cd cuda && NSYSSYNC_GPU_TEST=1 ../bin/cuda.test -test.run '^TestGPU' -test.v -test.count=1 -test.timeout 500s

clean:
	rm -rf bin
