# spoolgate: make demo (first run), make test (what CI runs), make bench.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/spoolgate/spoolgate/doors/cli.version=$(VERSION)
FUZZTIME ?= 20s

.PHONY: all build test vet race cross demo bench fuzz reliability soak clean mockllm doorclient screenshots

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/spoolgate ./cmd/spoolgate

# The test command of the README and of CI: vet and the race-enabled
# suite (fuzz seed corpora included). The suite also type-checks every
# package for Windows and macOS from source (internal/layering's
# TestCrossBuild: what a cross build's front end rejects, for under a
# tenth of its CPU on a fresh machine, where `go build` compiles the
# standard library and every dependency once more per OS: the two niced
# builds beside the suite made a cold fresh clone's make test 1,173 s
# where it took 1,034 without them, on 2 cores); `make cross` runs the
# full builds.
test: race

vet:
	$(GO) vet ./...

# -parallel 3: the command's end-to-end tests that share nothing run in
# parallel; they spend most of their time waiting on daemons, stand-ins
# and pages (one alone keeps a 2-core machine 75-90 % idle), so three at
# once fit two cores beside the browser package's own Chromium (four made
# the load-bound tests flaky). Those that
# assert an upper bound on a duration (a start timeout, a stopped
# browser's close) stay serial.
#
# -vet=all: the suite runs all of go vet's checks (not go test's
# subset) on every package, test files included, as `go vet ./...` does,
# from the race build it compiles anyway, so a fresh machine compiles
# Linux's packages once. Each package's vet is a step of its own test, not
# a pass over the module before any test: the command's end-to-end tests,
# the longest, start as soon as their package is built and vetted. A vet
# finding fails its package like a failing test. atexit_sleep_ms=0: a
# race-built process otherwise sleeps a second before it exits, every
# test binary and every process the tests start from one (see
# cmd/spoolgate's TestMain); races are still reported as they happen.
race: mockllm doorclient
	GORACE=atexit_sleep_ms=0 $(GO) test -race -vet=all -count=1 -parallel 3 -timeout 30m ./...

# The npm mock LLM server that lanes/apimodel's tests run against, at the
# version examples/mockllm/package-lock.json pins; installed again only when
# the lock file is newer. SPOOLGATE_NO_NPM=1 leaves it out on a machine
# without node (those tests then skip; never in CI, where they fail).
MOCKLLM_STAMP := examples/mockllm/node_modules/.package-lock.json
mockllm:
	@if [ -n "$$SPOOLGATE_NO_NPM" ]; then echo "mockllm: SPOOLGATE_NO_NPM is set: the npm mock server is not installed"; \
	elif [ $(MOCKLLM_STAMP) -nt examples/mockllm/package-lock.json ]; then :; \
	else npm ci --prefix examples/mockllm --no-audit --no-fund; fi

# The official openai npm SDK that cmd/spoolgate's front-door tests drive
# (examples/doorclient), at the version its package-lock.json pins; as
# mockllm, installed again only when the lock file is newer.
DOORCLIENT_STAMP := examples/doorclient/node_modules/.package-lock.json
doorclient:
	@if [ -n "$$SPOOLGATE_NO_NPM" ]; then echo "doorclient: SPOOLGATE_NO_NPM is set: the npm openai SDK is not installed"; \
	elif [ $(DOORCLIENT_STAMP) -nt examples/doorclient/package-lock.json ]; then :; \
	else npm ci --prefix examples/doorclient --no-audit --no-fund; fi

# The full cross builds of every package (make test type-checks them).
cross:
	GOOS=windows $(GO) build ./...
	GOOS=darwin  $(GO) build ./...

# The field report's 40-task batch, for real: both lanes, a real browser,
# live progress, a summary. Installs Chromium through apt when run as root.
demo: build
	$(GO) run ./examples/cmd/demo $(DEMOFLAGS)

# One program, one run: every scheduling strategy on the same workload, and
# the spool-core figures, each as a ratio against a baseline of the same run.
bench: build
	$(GO) run ./examples/cmd/bench $(BENCHFLAGS)

# Each fuzz target for a bounded time (CI runs only their seed corpora).
fuzz:
	$(GO) test ./spool/taskfile -run '^$$' -fuzz '^FuzzDecodeTask$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool/config -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool/taskfile -run '^$$' -fuzz '^FuzzScanSummary$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/safetext -run '^$$' -fuzz '^FuzzLine$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool/config -run '^$$' -fuzz '^FuzzParseDuration$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool/taskfile -run '^$$' -fuzz '^FuzzDecodeHold$$' -fuzztime $(FUZZTIME)
	$(GO) test ./browser -run '^$$' -fuzz '^FuzzParseReset$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool -run '^$$' -fuzz '^FuzzDecodeLease$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool -run '^$$' -fuzz '^FuzzParseGen$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/seal -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME)
	$(GO) test ./doors/frontdoor -run '^$$' -fuzz '^FuzzParseChat$$' -fuzztime $(FUZZTIME)
	$(GO) test ./doors/tableimport -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool -run '^$$' -fuzz '^FuzzOpenAuditLine$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool/attach -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool/attach -run '^$$' -fuzz '^FuzzSniff$$' -fuzztime $(FUZZTIME)
	$(GO) test ./lanes/artifacts -run '^$$' -fuzz '^FuzzTextAddresses$$' -fuzztime $(FUZZTIME)
	$(GO) test ./spool/taskfile -run '^$$' -fuzz '^FuzzCompileSchema$$' -fuzztime $(FUZZTIME)

# Every end-to-end test (./e2e/...) run RELIABILITY_COUNT times beside two
# busy loops (a loaded 2-core machine), reported by e2e/cmd/flakes: each
# test that failed once, how often; it exits 1 if any did.
RELIABILITY_COUNT ?= 5
reliability: mockllm doorclient
	@hogs=""; for i in 1 2; do (while :; do :; done) & hogs="$$hogs $$!"; done; \
	trap 'kill $$hogs' EXIT; \
	GORACE=atexit_sleep_ms=0 $(GO) test -race -count=$(RELIABILITY_COUNT) -parallel 3 -timeout 180m -json ./e2e/... | $(GO) run ./e2e/cmd/flakes

# The long soaks at full size: 10,000 drops, the 500-task crash matrix, 50
# slow writers, 24 tasks on two accounts, every kill point of a web send.
# `make test` runs a smaller version of each (testkit.Reliability).
SOAK_RUN := Reliability|TestExecutor_KeyEcho|TestE2E_Web_TwoAccounts|TestE2E_Web_KillPoints|TestShare_SlowWriters|TestSuggest_ChatUIs|TestE2E_Suggest_Reasoning
soak:
	SPOOLGATE_RELIABILITY=1 $(GO) test -count=1 -timeout 60m -run '$(SOAK_RUN)' -v ./e2e/... ./lanes ./browser ./lanes/apimodel | grep -E '^(=== RUN|--- |    reliability|    shares_test|ok|FAIL|PASS)'

# The console's pages at 1280 and 390 px wide, as PNGs in ./screenshots
# (not committed), from a real `spoolgate run` and headless Chromium.
screenshots:
	SPOOLGATE_SCREENSHOTS=$(CURDIR)/screenshots $(GO) test -count=1 -run '^TestE2E_ConsolePages$$' ./e2e/doors
	@ls $(CURDIR)/screenshots

clean:
	rm -rf bin demo
