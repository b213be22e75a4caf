# Herald build and test entry points. See README.md.
TAGS := desktop,production,webkit2_41
BIN  := build/bin/herald

.PHONY: deps run build test vet unit desktop bench

deps:
	./scripts/deps.sh

# Build the desktop binary and start it.
run: deps build
	./$(BIN)

build:
	go build -tags $(TAGS) -trimpath -ldflags "-s -w" -o $(BIN) .

vet:
	go vet ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

unit:
	go test -race -count=1 -timeout 8m ./...

desktop: build
	@echo "desktop binary: $(BIN) $$(stat -c %s $(BIN)) bytes"

# The whole test suite: what CI runs.
test: deps vet unit desktop

bench:
	go test -run '^$$' -bench . -benchmem ./backend/...
