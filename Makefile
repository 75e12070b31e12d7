# nsyssync — the README's quick start uses `make demo` and `make test`.
GO      ?= go
BIN     ?= bin/nsyssync
DEMO    ?= fixtures/syncs_backtrace.sqlite
BENCHGB ?= 1

.PHONY: build test demo bench lint fmt-check vet clean check-html examples golden

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

# The HTML report in headless Chromium (installs Debian's chromium when
# absent): screenshot and DOM checks, report/chromium_test.go.
check-html:
	bash scripts/check-html.sh

# Rewrites the report golden files (report/testdata/*.golden) after an
# intended change to a report; review the diff.
golden:
	$(GO) test -count=1 ./report/ -run TestGolden -update

# The example reports linked from the README (docs/examples/).
examples: build
	$(BIN) analyze --nvtx measured --format html -o docs/examples/syncs_backtrace.html $(DEMO)
	$(BIN) analyze --nvtx measured --format markdown -o docs/examples/syncs_backtrace.md $(DEMO)
	$(BIN) analyze --nvtx measured --format perfetto -o docs/examples/syncs_backtrace.perfetto.json $(DEMO)
	NO_COLOR=1 COLUMNS=100 $(BIN) analyze --nvtx measured --top 5 $(DEMO) > docs/examples/syncs_backtrace.txt

clean:
	rm -rf bin
