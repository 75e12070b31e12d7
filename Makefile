# nsyssync — the README's quick start uses `make demo` and `make test`.
GO      ?= go
BIN     ?= bin/nsyssync
DEMO    ?= fixtures/syncs_backtrace.sqlite
BENCHGB ?= 1

.PHONY: build test demo bench lint fmt-check vet clean

build:
	$(GO) build -o $(BIN) ./cmd/nsyssync

# All tests: unit tests, the real fixtures, the shared corpus (../shared/corpus
# when present) and the bad-input tests.
test:
	$(GO) test -count=1 ./...

demo: build
	$(BIN) analyze $(DEMO)

# Reader benchmark on a generated large export (BENCHGB gigabytes, built once
# under /tmp from a real fixture): rows a second and peak memory.
bench:
	NSYSSYNC_BENCH_GB=$(BENCHGB) $(GO) test -run '^$$' -bench . -benchtime 1x -benchmem ./trace/

lint: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

clean:
	rm -rf bin
