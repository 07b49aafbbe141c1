# moat's build and test entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
GO ?= go
export GOFLAGS := -buildvcs=false

.PHONY: FORCE build test conformance test-lib test-scripts bench-once tools test-short test-guest bench-guest vet cross guest fuzz fuzz-short bench bench-go clean

build:
	$(GO) build -o moat ./cmd/moat

# The whole suite, step by step, with a summary at the end (what ran, what
# passed, how long each step took): vet, cross-compiles, the libraries' tests
# under -race, the end-to-end scripts (cmd/moat; every moat they start would
# be a race-instrumented binary, several times slower, testing the same code
# the -race run already covers), the guest's packages in wazero, short fuzz
# runs, and every benchmark once so none rots. Every step runs even after one
# fails, so one run shows every failure; the exit status is 1 if any failed.
# The go test steps go through moat-testsum (go test -json), so the summary
# names every failed test with its package, and every skipped test with the
# reason it gave (go test without -v shows neither).
TEST_STEPS = vet cross test-lib test-scripts conformance test-guest fuzz-short bench-once
test: tools
	@log=$$(mktemp -d); trap 'rm -rf $$log' EXIT; start=$$(date +%s); failed=0; \
	for s in $(TEST_STEPS); do \
	  t0=$$(date +%s); echo "=== make $$s"; \
	  if $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $$s SUMMARY=$$log/$$s.sum 2>&1 | tee $$log/$$s; [ $${PIPESTATUS[0]} -eq 0 ]; then r=ok; else r=FAIL; failed=$$((failed+1)); fi; \
	  fz=$$(grep -cE '^fuzz ' $$log/$$s || true); what=""; [ $$fz -gt 0 ] && what="$$fz fuzz targets"; \
	  [ -s $$log/$$s.sum ] && what=$$(grep -h '^packages: ' $$log/$$s.sum | paste -sd'|' | sed 's/|/ + /g'); \
	  printf '  %-13s %-4s %5ss  %s\n' $$s $$r $$(( $$(date +%s) - t0 )) "$$what" >> $$log/summary; \
	  [ -s $$log/$$s.sum ] && grep -v '^packages: ' $$log/$$s.sum | sed 's/^/    /' >> $$log/summary; \
	done; \
	echo; echo "=== summary of make test ($$(( $$(date +%s) - start ))s in all)"; cat $$log/summary; \
	if [ $$failed -gt 0 ]; then echo "$$failed step(s) FAILED"; exit 1; fi; echo "all $(words $(TEST_STEPS)) steps passed"

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
test-guest: .bin/moat-testsum .bin/go_wasip1_wasm_exec
	@set -o pipefail; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	TMPDIR=$$tmp $(WASI_ENV) $(GO) test -json -timeout 10m ./guest/... 2>&1 | $(TESTSUM)

test-short:
	$(GO) test -short ./...

vet:
	@fmt=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$fmt" ]; then echo "gofmt needed:"; echo "$$fmt"; exit 1; fi
	$(GO) vet ./...

# moat runs wherever Ollama runs; linux/386 keeps the code free of
# constants that only fit a 64-bit int.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/moat
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/moat
	GOOS=linux GOARCH=arm64 $(GO) build -o /dev/null ./cmd/moat
	GOOS=linux GOARCH=386 $(GO) build -o /dev/null ./cmd/moat

# Rebuild the committed guest reproducibly; TestWasmUpToDate checks it.
guest:
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags="-s -w" -o guest/tools.wasm ./guest/cmd/moat-tools
	$(GO) run ./cmd/moat-wasmpack guest/tools.wasm
	$(GO) env GOVERSION > guest/toolchain.txt

# Every fuzz target for a short fixed time (CI), or longer (FUZZTIME=5m make fuzz).
FUZZTIME ?= 5s
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME)
# A run that fails without recording a failing input (a crasher file under
# testdata/fuzz) is the fuzzing engine's own trouble, such as a worker that
# hung on a loaded machine: its log is shown and the run retried once. A
# recorded input always fails the build.
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    before=$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l); \
	    if ! $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg >$$log 2>&1; then \
	      cat $$log; \
	      after=$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l); \
	      if [ "$$after" != "$$before" ]; then echo "fuzz: $$f found a failing input (see $$dir/testdata/fuzz/$$f)"; exit 1; fi; \
	      echo "fuzz: $$f failed without a failing input; retrying once"; \
	      $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	    fi; \
	  done; \
	done

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
