# Herald build and test entry points. See README.md.
TAGS := desktop,production,webkit2_41
BIN  := build/bin/herald

.PHONY: deps run build frontend test vet unit ui-test fuzz desktop e2e bench

deps:
	./scripts/deps.sh

# Build the desktop binary and start it.
run: deps build
	./$(BIN)

frontend:
	cd frontend && npm ci --no-audit --no-fund && npm run build

build: frontend
	go build -tags $(TAGS) -trimpath -ldflags "-s -w" -o $(BIN) .

vet:
	go vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './frontend/*'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

unit:
	go test -race -count=1 -timeout 8m ./...

ui-test: frontend
	cd frontend && npm test

desktop: build
	@echo "desktop binary: $(BIN) $$(stat -c %s $(BIN)) bytes"

# The desktop end-to-end test of the release binary under Xvfb and a private
# D-Bus (notification, tray, window); prints binary size and idle memory.
# One retry: a real click can never beat Wails' own Notify call, a test can.
e2e: desktop
	HERALD_E2E_BINARY=$(CURDIR)/$(BIN) HERALD_E2E_NPM_CI=0 ./e2e/run.sh || { echo "e2e: retrying once"; HERALD_E2E_BINARY=$(CURDIR)/$(BIN) HERALD_E2E_NPM_CI=0 ./e2e/run.sh; }

# The whole test suite: what CI runs.
test: deps vet unit ui-test fuzz desktop e2e

# Every fuzz target for FUZZTIME each (CI: briefly).
fuzz:
	FUZZTIME=$${FUZZTIME:-5s} ./scripts/fuzz.sh

# One markdown table of every benchmark (see BENCHMARKS.md).
bench:
	./scripts/bench.sh
