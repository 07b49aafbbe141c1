# moat's build and test entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
GO ?= go
export GOFLAGS := -buildvcs=false

.PHONY: FORCE build test conformance fuzz-one cross test-lib test-scripts bench-once tools test-short test-guest bench-guest vet cross guest fuzz fuzz-short bench bench-go clean

build:
	$(GO) build -o moat ./cmd/moat

# The whole suite, with a summary at the end (what ran, what passed, how
# long each step took): vet, cross-compiles, the libraries' tests under
# -race, the end-to-end scripts (cmd/moat; every moat they start would be a
# race-instrumented binary, several times slower, testing the same code the
# -race run already covers), the guest's packages in wazero, short fuzz
# runs, and every benchmark once so none rots. Every step runs even after
# one fails, so one run shows every failure; the exit status is 1 if any
# failed. The go test steps go through moat-testsum (go test -json), so the
# summary names every failed test with its package, and every skipped test
# with the reason it gave (go test without -v shows neither).
#
# The steps are independent, so TEST_JOBS of them run side by side (make
# -j: default the number of cores plus one, at least 3, since no step keeps
# every core busy all the time), the longest first; each step's output is
# kept whole and printed when it ends (make -O), and the summary lists them
# in TEST_STEPS order whatever order they ended in. TEST_JOBS=1 runs them
# one after another. No test asserts on time, so steps side by side make
# them slower, never wrong. The helpers every step shares (moat-testsum,
# the guest's exec wrapper) are built once, before.
TEST_STEPS = vet cross test-lib test-scripts conformance test-guest fuzz-short bench-once
NPROC := $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
TEST_JOBS ?= $(shell n=$$(( $(NPROC) + 1 )); echo $$(( n < 3 ? 3 : n )))
# The order in which the steps start: the longest first, so that the last
# to end is not a long one started late. A step not named here starts after.
LONG_FIRST = test-lib conformance fuzz-short test-scripts test-guest cross bench-once vet
STEP_ORDER = $(filter $(TEST_STEPS),$(LONG_FIRST)) $(filter-out $(LONG_FIRST),$(TEST_STEPS))
test: tools .bin/moat-testsum .bin/go_wasip1_wasm_exec
	@log=$$(mktemp -d); trap 'rm -rf $$log' EXIT; start=$$(date +%s); failed=0; \
	echo "=== make test: $(words $(TEST_STEPS)) steps, $(TEST_JOBS) at a time; each step's output when it ends"; \
	$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) -j$(TEST_JOBS) -O -k TEST_LOG=$$log $(addprefix step-,$(STEP_ORDER)); \
	for s in $(TEST_STEPS); do \
	  r=$$(cat $$log/$$s.result 2>/dev/null || echo FAIL); [ "$$r" = ok ] || failed=$$((failed+1)); \
	  fz=$$(grep -cE '^fuzz ' $$log/$$s 2>/dev/null || true); what=""; [ "$$fz" -gt 0 ] && what="$$fz fuzz targets"; \
	  [ -s $$log/$$s.sum ] && what=$$(grep -h '^packages: ' $$log/$$s.sum | paste -sd'|' | sed 's/|/ + /g'); \
	  printf '  %-13s %-4s %5ss  %s\n' $$s $$r "$$(cat $$log/$$s.secs 2>/dev/null || echo '?')" "$$what" >> $$log/summary; \
	  [ -s $$log/$$s.sum ] && grep -v '^packages: ' $$log/$$s.sum | sed 's/^/    /' >> $$log/summary; \
	done; \
	echo; echo "=== summary of make test ($$(( $$(date +%s) - start ))s in all)"; cat $$log/summary; \
	if [ $$failed -gt 0 ]; then echo "$$failed step(s) FAILED"; exit 1; fi; echo "all $(words $(TEST_STEPS)) steps passed"

# One step of make test, its output into TEST_LOG/STEP (printed whole at
# its end), its result and its time beside it. It always succeeds: the
# summary reads the result.
step-%:
	@t0=$$(date +%s); \
	if $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $* SUMMARY=$(TEST_LOG)/$*.sum >$(TEST_LOG)/$* 2>&1; then r=ok; else r=FAIL; fi; \
	echo $$(( $$(date +%s) - t0 )) > $(TEST_LOG)/$*.secs; echo $$r > $(TEST_LOG)/$*.result; \
	echo "=== make $* ($$r, $$(cat $(TEST_LOG)/$*.secs)s)"; cat $(TEST_LOG)/$*

# moat-testsum reads go test -json; SUMMARY (set by make test) is the file
# its ending is appended to.
TESTSUM = .bin/moat-testsum $(if $(SUMMARY),-o $(SUMMARY))
.bin/moat-testsum: $(wildcard cmd/moat-testsum/*.go)
	$(GO) build -o $@ ./cmd/moat-testsum

# guest/match runs without -race: it is single-threaded pure computation (no
# goroutine, no sync), where the race detector finds nothing and multiplies
# its differential corpus's time by about 17 (185 s against 11 s).
NORACE = github.com/moatdev/moat/guest/match
test-lib: .bin/moat-testsum
	set -o pipefail; { $(GO) test -json -race -timeout 20m $$($(GO) list ./... | grep -v '/cmd/' | grep -vxF '$(NORACE)') ; s=$$?; \
	  $(GO) test -json -timeout 20m $(NORACE) || s=1; exit $$s; } 2>&1 | $(TESTSUM)
test-scripts: .bin/moat-testsum mcp-clients
	set -o pipefail; $(GO) test -json -timeout 20m ./cmd/... 2>&1 | $(TESTSUM)
bench-once: .bin/moat-testsum
	set -o pipefail; $(GO) test -json -run '^$$' -bench . -benchtime 1x -timeout 10m ./... 2>&1 | $(TESTSUM)

# The agent against Ollama's own server code: conformance/ is a module of
# its own (Ollama's server package at the version go.mod requires, built
# pure Go with a scripted generator in the model's place; build.sh says
# how), built into .bin/ollamareal unless the build of the same inputs is
# there, then cmd/moat's TestConformance* run against it in both APIs. A
# server that cannot be built fails the step; nothing is skipped.
conformance: .bin/moat-testsum
	conformance/build.sh $(CURDIR)/.bin/ollamareal
	set -o pipefail; MOAT_OLLAMAREAL=$(CURDIR)/.bin/ollamareal $(GO) test -json -count=1 -timeout 10m -run '^TestConformance' ./cmd/moat 2>&1 | $(TESTSUM)

# ripgrep and git: the differential tests compare grep with ripgrep and the
# .gitignore matcher with git itself. Installed from Debian's packages when
# missing (CI runs as root on a fresh machine); without them those tests
# skip and say why.
tools:
	@missing=""; for t in rg git; do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing from Debian's packages"; \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && apt-get install -y -qq ripgrep git) >/dev/null || echo "could not install$$missing; the tests that compare with them skip"; \
	  else echo "not root: install$$missing yourself, or the tests that compare with them skip"; fi; \
	fi

# The official TypeScript MCP SDK, whose client testscripts/mcp/mcp_typescript.txtar
# drives against moat mcp over stdio and HTTP: npm ci from the committed
# package-lock.json (98 packages, 29 MB, about 5 s; the script itself runs
# in about 2 s). Without node the script skips and says why; the script
# runs the same npm ci itself when the packages are missing.
MCP_CLIENT = cmd/moat/testdata/mcpclient
.PHONY: mcp-clients
mcp-clients:
	@if command -v npm >/dev/null; then \
	  [ -d $(MCP_CLIENT)/node_modules/@modelcontextprotocol/sdk ] || (cd $(MCP_CLIENT) && npm ci --no-audit --no-fund --ignore-scripts); \
	else echo "no node/npm: the TypeScript MCP client test skips"; fi

# The guest's packages tested where they run: compiled to wasip1 and run in
# wazero, the version go.mod pins, with the host module moat gives its guest
# (cmd/moat-wasmexec, built here as the go_wasip1_wasm_exec that go test
# looks for on PATH, ahead of Go's own, which would run wazero's command).
WASI_ENV = PATH="$(CURDIR)/.bin:$$PATH" GOOS=wasip1 GOARCH=wasm
.bin/go_wasip1_wasm_exec: FORCE
	@mkdir -p .bin
	$(GO) build -o $@ ./cmd/moat-wasmexec
# Each run gets a fresh TMPDIR for the files the tests make, but wazero's
# compilation of the test binaries is kept in .bin/wazero-cache from one
# run to the next (a test binary that did not change is not compiled again;
# about 170 MB for one set, and what is older than a week is removed first).
test-guest: .bin/moat-testsum .bin/go_wasip1_wasm_exec
	@set -o pipefail; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	find $(CURDIR)/.bin/wazero-cache -type f -mtime +7 -delete 2>/dev/null || true; \
	TMPDIR=$$tmp MOAT_WASMEXEC_CACHE=$(CURDIR)/.bin/wazero-cache $(WASI_ENV) $(GO) test -json -timeout 10m ./guest/... 2>&1 | $(TESTSUM)

test-short:
	$(GO) test -short ./...

vet:
	@fmt=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$fmt" ]; then echo "gofmt needed:"; echo "$$fmt"; exit 1; fi
	$(GO) vet ./...

# moat runs wherever Ollama runs; linux/386 keeps the code free of
# constants that only fit a 64-bit int. Each platform is built once, side
# by side with the others (and with make test's other steps) under -j.
CROSS = darwin-arm64 windows-amd64 linux-arm64 linux-386
cross: $(addprefix cross-,$(CROSS))
cross-%:
	GOOS=$(word 1,$(subst -, ,$*)) GOARCH=$(word 2,$(subst -, ,$*)) $(GO) build -o /dev/null ./cmd/moat

# Rebuild the committed guest reproducibly; TestWasmUpToDate checks it.
guest:
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags="-s -w" -o guest/tools.wasm ./guest/cmd/moat-tools
	$(GO) run ./cmd/moat-wasmpack guest/tools.wasm
	$(GO) env GOVERSION > guest/toolchain.txt

# Every fuzz target for a short fixed time (CI), or longer (FUZZTIME=5m make fuzz).
# The targets are found in the packages' test files (go list names them, so
# build constraints hold), not by building every package's test binary to
# list them, and FUZZ_JOBS of them run side by side (default one per
# core), each with FUZZ_PARALLEL workers (default 1: the cores are shared
# among the targets instead), for FUZZTIME each.
FUZZTIME ?= 5s
FUZZ_JOBS ?= $(NPROC)
FUZZ_PARALLEL ?= 1
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME)
fuzz:
	@set -e; list=$$(mktemp); trap 'rm -f $$list' EXIT; \
	$(GO) list -f '{{.ImportPath}} {{.Dir}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}' ./... | \
	while read -r pkg dir files; do \
	  [ -n "$$files" ] || continue; \
	  for f in $$(cd $$dir && grep -ho '^func Fuzz[A-Za-z0-9_]*(' $$files | sed 's/^func //; s/($$//'); do echo "$$pkg $$dir $$f"; done; \
	done > $$list; \
	echo "fuzzing $$(wc -l < $$list) targets, $(FUZZ_JOBS) side by side, $(FUZZTIME) each"; \
	xargs -P $(FUZZ_JOBS) -L 1 sh -c '$(MAKE) --no-print-directory -s fuzz-one PKG=$$0 DIR=$$1 TARGET=$$2' < $$list
# One fuzz target. A run that fails without recording a failing input (a
# crasher file under testdata/fuzz) is the fuzzing engine's own trouble,
# such as a worker that hung on a loaded machine: its log is shown and the
# run retried once. A recorded input always fails the build. The target's
# output is printed whole when it ends, not mixed with the others'.
fuzz-one:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	run() { $(GO) test -run '^$$' -fuzz "^$(TARGET)$$" -fuzztime $(FUZZTIME) -parallel $(FUZZ_PARALLEL) $(PKG) >$$log 2>&1; }; \
	before=$$(ls $(DIR)/testdata/fuzz/$(TARGET) 2>/dev/null | wc -l); \
	if run; then echo "fuzz $(PKG) $(TARGET) ($(FUZZTIME))"; exit 0; fi; \
	after=$$(ls $(DIR)/testdata/fuzz/$(TARGET) 2>/dev/null | wc -l); \
	{ echo "fuzz $(PKG) $(TARGET) ($(FUZZTIME))"; cat $$log; } ; \
	if [ "$$after" != "$$before" ]; then echo "fuzz: $(TARGET) found a failing input (see $(DIR)/testdata/fuzz/$(TARGET))"; exit 1; fi; \
	echo "fuzz: $(TARGET) failed without a failing input; retrying once"; \
	if run; then echo "fuzz: $(TARGET) passed on the retry"; exit 0; fi; cat $$log; exit 1

# The performance table of BENCHMARKS.md: moat side by side with GNU grep,
# ripgrep and native Go, medians of several runs (RUNS=n).
RUNS ?= 7
bench:
	@missing=""; for t in grep rg /usr/bin/time; do command -v $$t >/dev/null || missing=1; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing grep, ripgrep and time from Debian's packages"; \
	  (apt-get update -qq && apt-get install -y -qq grep ripgrep time) >/dev/null || echo "could not install them; those rows are skipped"; \
	fi
	$(GO) run ./cmd/moat-bench -runs $(RUNS)

# The guest's own benchmarks, run where the guest runs (wazero), over Go's
# source tree.
bench-guest: .bin/go_wasip1_wasm_exec
	GOROOT=$$($(GO) env GOROOT) WASIFS_BENCH_DIR=$$($(GO) env GOROOT)/src $(WASI_ENV) $(GO) test -run '^$$' -bench . -count 3 ./guest/...

bench-go:
	$(GO) test -run '^$$' -bench . -count 5 ./...

clean:
	rm -f moat
FORCE:
