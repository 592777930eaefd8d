# compactbench — see README.md.
GO      ?= go
PKGS    := ./...
BIN     := bin/compactbench
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build run test vet fmt-check lint bench fuzz corpus clean factors baseline gate tools

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/compactbench

## run: the main job on the shipped corpus; outputs in results/latest/
run: build
	./$(BIN) run corpora/

## gate: compare the last `make run` with the committed baseline (exit 1 on a regression)
gate: build
	./$(BIN) gate --baseline results/baseline.json --current results/latest/summary.json

## baseline: refresh results/baseline.json, the CI gate's reference, from the main job
## on corpora/ (after a change that moves the figures on purpose; review the diff)
baseline: run
	cp results/latest/summary.json results/baseline.json

## tools: what the browser and DuckDB tests use: Debian's chromium (installed when
## root) and @duckdb/node-api under .tools/node (gitignored). Without them those
## tests skip, unless COMPACTBENCH_REQUIRE_TOOLS is set (CI sets it).
DUCKDB_NODE ?= 1.5.6-r.1
tools:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "chromium is missing: apt-get install chromium (the browser test skips without it)"; fi; \
	fi
	@test -d .tools/node/node_modules/@duckdb/node-api || \
		npm install --prefix .tools/node --no-audit --no-fund --loglevel=error @duckdb/node-api@$(DUCKDB_NODE)

## corpus: regenerate corpora/generated (a test checks it matches CORPUS_GEN)
CORPUS_GEN := --seed 6 --sessions 14
corpus: build
	rm -rf corpora/generated
	./$(BIN) gen $(CORPUS_GEN) --quiet corpora/generated

## test: formatting, vet and the race-enabled test suite (what CI runs); ends with how
## many tests were skipped and why
test: fmt-check vet
	@out=$$(mktemp); $(GO) test -race -count=1 -timeout 30m -json $(PKGS) > $$out; status=$$?; \
	$(GO) run ./internal/testutil/testsummary < $$out; summary=$$?; rm -f $$out; \
	[ $$status = 0 ] && [ $$summary = 0 ]

vet:
	$(GO) vet $(PKGS)

## lint: staticcheck, fetched through the module proxy at a pinned version
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: Go benchmarks (loader, rulers, strategies, full run)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x $(PKGS)

## fuzz: a short fuzzing session per fuzz target (FUZZTIME=30s by default); an
## interesting input is minimised for at most FUZZMINIMIZE (the default 60 s made
## the fuzzer spend its whole session minimising one large seed)
FUZZTIME ?= 30s
FUZZMINIMIZE ?= 2s
fuzz:
	@for target in $$(grep -rhoE '^func (Fuzz[A-Za-z0-9_]+)' --include='*_test.go' internal | sed 's/func //'); do \
		pkg=$$(grep -rlE "^func $$target\(" --include='*_test.go' internal | xargs dirname | head -1); \
		echo "== $$pkg $$target"; $(GO) test ./$$pkg -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) || exit 1; \
	done

## factors: refit the calibrated ruler's shipped factors, per tokenizer
## generation, on the real sessions beside the repository (the data is never
## committed); calibrate prints the errors held out by file and by folder
REAL ?= ../shared/real-corpus
factors: build
	./$(BIN) calibrate -o internal/tokens/default_factors.json $(REAL)

clean:
	rm -rf bin results/latest
