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

# Inventory benchmark on large exports generated from real ones (BENCHGB
# gigabytes, cached under /tmp): seconds, rows a second, peak memory, and the
# sqlite3 floor. docs/performance.md records the results.
bench:
	scripts/bench.sh $(BENCHGB)

lint: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

clean:
	rm -rf bin
