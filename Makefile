# Herald build and test entry points. See README.md.
TAGS := desktop,production,webkit2_41
BIN  := build/bin/herald
# A Node.js for the frontend that scripts/deps.sh installed when the
# system's was too old (Debian 12's is 18; vite 8 needs 20.19+).
export PATH := $(CURDIR)/.tools/node/node_modules/.bin:$(PATH)
# That Node carries its own certificate authorities; like Debian's own it
# also trusts the system's (a company's TLS proxy, say).
ifeq ($(NODE_EXTRA_CA_CERTS),)
ifneq ($(wildcard /etc/ssl/certs/ca-certificates.crt),)
export NODE_EXTRA_CA_CERTS := /etc/ssl/certs/ca-certificates.crt
endif
endif
# The window program: on Linux herald (no GTK, no WebKit) is the always-on
# process and starts herald-window only while the window is open.
WINDOW_BIN := build/bin/herald-window

# The version: wails.json's productVersion, plus the commit in a checkout.
VERSION_BASE := $(shell sed -n 's/.*"productVersion": *"\([^"]*\)".*/\1/p' wails.json)
COMMIT       := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
VERSION      ?= $(VERSION_BASE)$(if $(COMMIT),+git$(COMMIT))
LDFLAGS      := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# `make install` is per user (no root needed); PREFIX=/usr/local for all
# users, DESTDIR for staging a package.
PREFIX  ?= $(HOME)/.local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
# The desktop entry's Exec= (default: the installed binary's path).
DESKTOP_EXEC ?= $(BINDIR)/herald

DIST     := build/bin/dist
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null || go env GOARCH)
DEB      := $(DIST)/herald_$(VERSION)_$(DEB_ARCH).deb
TARBALL  := $(DIST)/herald-$(VERSION)-linux-$(DEB_ARCH).tar.gz

.PHONY: deps run build frontend test vet unit ui-test fuzz desktop e2e bench \
        install uninstall dist deb tarball package-check cross icons bindings plugin-test \
        integration

deps:
	./scripts/deps.sh
	@# The real Hermes servers' Python packages, when ../shared is beside the clone.
	@if [ -x "$(HERMES_PEER)/install-deps" ]; then "$(HERMES_PEER)/install-deps"; fi

# Build the desktop binary and start it.
run: deps build
	./$(BIN)

frontend:
	cd frontend && npm ci --no-audit --no-fund && npm run build

build: frontend
	go build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .
	go build -tags $(TAGS) -trimpath -ldflags "$(LDFLAGS)" -o $(WINDOW_BIN) .

# install, uninstall and dist use the binaries there are, building them if
# none; binaries left from another commit are refused rather than packaged.
$(BIN) $(WINDOW_BIN) &:
	$(MAKE) build

.PHONY: fresh
fresh: $(BIN) $(WINDOW_BIN)
	@for b in $(BIN) $(WINDOW_BIN); do ./$$b version | grep -qF "herald $(VERSION) " || { \
	  echo "$$b is $$(./$$b version), not version $(VERSION): run make build first" >&2; exit 1; }; done

vet:
	go vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './frontend/*'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

# The Windows desktop binary and every package macOS builds without cgo.
cross:
	CROSS_LDFLAGS="-X main.version=$(VERSION) -X main.commit=$(COMMIT)" ./scripts/cross.sh build/bin

unit:
	go test -race -count=1 -timeout 8m ./...

# The Hermes plugin (hermes-plugin/): Python unit tests against Hermes' real transport host code
# and the real 0.19.0 dashboard, with Debian's python3 (skipped without ../shared, except in CI).
plugin-test:
	./hermes-plugin/run-tests

# Herald against the real Hermes servers (hermes-agent 0.18.2 and 0.19.0
# with a stub agent, from ../shared/hermes-peer or HERMES_PEER=DIR), and the
# fake gateway's conformance to them. Without the peer it says so and
# skips; with CI=true that fails. `run prepare` extracts each version once.
HERMES_PEER ?= $(abspath ../shared/hermes-peer)
integration:
	@if [ -x "$(HERMES_PEER)/run" ]; then \
	  for v in 0.18.2 0.19.0; do "$(HERMES_PEER)/run" prepare --version $$v >/dev/null || exit 1; done; \
	else \
	  echo "real Hermes tests skipped: $(HERMES_PEER) not found; set HERMES_PEER=/path/to/hermes-peer (and HERMES_PEER_SRC=/path/to/hermes-agent to run a checkout)"; \
	  case "$${CI:-}" in ""|false|0) exit 0;; *) exit 1;; esac; \
	fi
	HERMES_PEER=$(HERMES_PEER) HERALD_INTEGRATION=1 go test -count=1 -timeout 14m ./integration ./backend/hermespeer

ui-test: frontend
	cd frontend && npm test && npm run check

# Regenerate the window's bindings (frontend/wailsjs) from app.App's
# methods; commit the result. This is what `wails generate module` does:
# build Herald with Wails' bindings tag and run it (it writes the files and
# exits, with no window and no display).
bindings:
	go build -tags bindings,desktop,webkit2_41 -o build/bin/herald-bindings .
	HERALD_CONFIG_DIR=$$(mktemp -d) ./build/bin/herald-bindings
	rm -f build/bin/herald-bindings

desktop: build
	@echo "desktop binaries: $(BIN) $$(stat -c %s $(BIN)) bytes, $(WINDOW_BIN) $$(stat -c %s $(WINDOW_BIN)) bytes"

# Redraw the icon files in build/ from package brand.
icons:
	go run ./brand/gen

# Install for this user: the binary, the app-menu entry and the icons.
install: fresh
	install -Dm755 $(BIN) $(DESTDIR)$(BINDIR)/herald
	install -Dm755 $(WINDOW_BIN) $(DESTDIR)$(BINDIR)/herald-window
	install -d $(DESTDIR)$(DATADIR)/applications
	sed -e 's|^Exec=herald$$|Exec=$(DESKTOP_EXEC)|' -e 's|^TryExec=herald$$|TryExec=$(DESKTOP_EXEC)|' \
	  build/linux/herald.desktop > $(DESTDIR)$(DATADIR)/applications/herald.desktop
	chmod 644 $(DESTDIR)$(DATADIR)/applications/herald.desktop
	cd build/linux/icons && find hicolor -type f | while read -r f; do \
	  install -Dm644 "$$f" "$(DESTDIR)$(DATADIR)/icons/$$f" || exit 1; done
	@if [ -z "$(DESTDIR)" ]; then $(MAKE) --no-print-directory refresh-caches; fi
	@echo "installed: $(DESTDIR)$(BINDIR)/herald and Herald in the app menu"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/herald $(DESTDIR)$(BINDIR)/herald-window $(DESTDIR)$(DATADIR)/applications/herald.desktop
	cd build/linux/icons && find hicolor -type f | while read -r f; do rm -f "$(DESTDIR)$(DATADIR)/icons/$$f"; done
	@if [ -z "$(DESTDIR)" ]; then $(MAKE) --no-print-directory refresh-caches; fi

.PHONY: refresh-caches
refresh-caches:
	-@command -v update-desktop-database >/dev/null && update-desktop-database -q $(DATADIR)/applications || true
	-@command -v gtk-update-icon-cache >/dev/null && [ -d $(DATADIR)/icons/hicolor ] && \
	  gtk-update-icon-cache -q -t -f $(DATADIR)/icons/hicolor || true

# A Linux tarball (a prefix tree: unpack into ~/.local or /usr/local) and a
# .deb for Debian 12 / Ubuntu 22.04 and later.
dist: tarball deb

tarball: fresh
	rm -rf $(DIST)/tar $(DIST)/herald-*.tar.gz && mkdir -p $(DIST)/tar
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(DIST)/tar/herald-$(VERSION) PREFIX= BINDIR=/bin DATADIR=/share DESKTOP_EXEC=herald
	cp README.md $(DIST)/tar/herald-$(VERSION)/
	tar -C $(DIST)/tar --owner=0 --group=0 --sort=name -czf $(TARBALL) herald-$(VERSION)
	@echo "dist: $(TARBALL) $$(stat -c %s $(TARBALL)) bytes"

deb: fresh
	rm -rf $(DIST)/deb $(DIST)/herald_*.deb && mkdir -p $(DIST)/deb/DEBIAN
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(DIST)/deb PREFIX=/usr DESKTOP_EXEC=herald
	VERSION=$(VERSION) ARCH=$(DEB_ARCH) ./scripts/debian-control.sh $(DIST)/deb > $(DIST)/deb/DEBIAN/control
	dpkg-deb --root-owner-group -Zxz --build $(DIST)/deb $(DEB) >/dev/null
	@echo "dist: $(DEB) $$(stat -c %s $(DEB)) bytes"

# CI: the entry validates, `make install` and `make uninstall` round-trip
# in a temporary home, the .deb installs (as root) and puts Herald in the
# app menu.
package-check: dist
	./scripts/package-check.sh $(DEB) $(TARBALL)

# The desktop end-to-end test of the release binary under Xvfb and a private
# D-Bus (notification, tray, window); prints binary size and idle memory.
# As root it installs the .deb and starts Herald from its desktop entry.
# One retry: a real click can never beat Wails' own Notify call, a test can.
E2E_ENV := HERALD_E2E_BINARY=$(CURDIR)/$(BIN) HERALD_E2E_NPM_CI=0 $(if $(filter 0,$(shell id -u)),HERALD_E2E_DEB=$(CURDIR)/$(DEB))
# E2E_PREBUILT=1 (make test) tests the binaries a step before built
# instead of building them again.
e2e: $(if $(E2E_PREBUILT),fresh,desktop) $(if $(filter 0,$(shell id -u)),deb)
	$(E2E_ENV) ./e2e/run.sh || { echo "e2e: retrying once"; $(E2E_ENV) ./e2e/run.sh; }

# The whole test suite: what CI runs. Timed steps (scripts/steps.sh prints
# each one's time and writes build/test-times.txt); "a|b" run at once: the
# real-server suites mostly wait while the race tests compute.
test:
	@./scripts/steps.sh deps "vet|cross" "unit|integration|plugin-test" "ui-test+desktop" fuzz package-check "e2e E2E_PREBUILT=1"

# Every fuzz target for FUZZTIME each (CI: briefly).
fuzz:
	FUZZTIME=$${FUZZTIME:-5s} ./scripts/fuzz.sh

# One markdown table of every benchmark (see BENCHMARKS.md).
bench:
	./scripts/bench.sh
