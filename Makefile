# boxsnap: `make run` runs it on its embedded default; `make test` runs every test.
# Each target installs what the machine lacks, and says what it did.

SHELL := /bin/bash
GO ?= go
BIN := bin/boxsnap
PLAYWRIGHT_CORE_VERSION := 1.64.1
DRIVER_DIR := $(CURDIR)/.cache/playwright-driver-$(PLAYWRIGHT_CORE_VERSION)
AXE_DIR := $(CURDIR)/.cache/axe-core
SQLC_VERSION := 1.31.1
SQLC := $(CURDIR)/.cache/bin/sqlc
VERSITYGW := $(CURDIR)/.cache/bin/versitygw
export BOXSNAP_VERSITYGW := $(VERSITYGW)
export PLAYWRIGHT_DRIVER_DIR := $(DRIVER_DIR)
export BOXSNAP_AXE_DIR := $(AXE_DIR)

# RACE_TESTS are the tests make test runs again under -race: those where
# goroutines share state (the settings cache, the sign-in throttle, the
# pages and the API under load).
RACE_TESTS := TestSettingsCacheCopies|TestSignInThrottled|TestSignInOneAtATimePerAddress|FuzzWebForms|TestFragmentsAndPages|TestThreadsSeeNoneOfAnothersThings|TestAgentCannot

.PHONY: run test soak bench shape build deps browser-deps vet clean sqlc sqlc-check

## run: build boxsnap and run it on its embedded default (private PostgreSQL, local backend, demo boxes);
## the browser deps take the demo box's pictures
run: build browser-deps
	@echo "make run: starting boxsnap on its embedded default (data in ./.data; Ctrl-C stops it)"
	./$(BIN) serve --demo=$${BOXSNAP_DEMO:-true}

## build: the boxsnap binary in ./bin
build: deps
	@$(GO) build -o $(BIN) .
	@echo "make: built $(BIN)"

## deps: Go modules (downloaded only when missing), PostgreSQL's binaries, bubblewrap, passt and e2fsprogs (installed only when missing)
deps:
	@scripts/need-go-modules.sh
	@scripts/need-postgres.sh
	@scripts/need-bubblewrap.sh
	@scripts/need-passt.sh
	@scripts/need-e2fsprogs.sh

## browser-deps: Debian's chromium and npm's playwright-core (for playwright-go) and axe-core, only when missing
browser-deps:
	@scripts/need-browser.sh "$(DRIVER_DIR)" "$(PLAYWRIGHT_CORE_VERSION)" "$(AXE_DIR)"

## sqlc: regenerate app/store/db, the typed Go functions of sql/queries (sqlc installed into ./.cache/bin when missing)
sqlc:
	@scripts/need-sqlc.sh "$(SQLC_VERSION)" "$(SQLC)"
	@$(SQLC) generate
	@echo "make sqlc: regenerated app/store/db from sql/queries and sql/migrations"

## sqlc-check: fails when app/store/db is not what sqlc makes of sql/queries and sql/migrations today
sqlc-check:
	@scripts/need-sqlc.sh "$(SQLC_VERSION)" "$(SQLC)"
	@if ! $(SQLC) diff >/dev/null 2>&1; then \
	  echo "make: app/store/db is stale (sql/queries or sql/migrations changed since it was generated): run make sqlc and commit the result"; \
	  $(SQLC) diff; exit 1; fi

## test: every test (unit, database, backends, simulator, browser); Docker's and QEMU's installed when missing
test: deps browser-deps sqlc-check
	@scripts/need-docker.sh
	@scripts/need-qemu.sh
	@scripts/need-versitygw.sh "$(VERSITYGW)"
	@echo "make test: gofmt, go vet and go test ./... (each test package gets its own private PostgreSQL cluster; the Docker backend's its own private dockerd; the QEMU backend's its own private libvirtd; the content-store tests their own versitygw)"
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	  if [ -n "$$unformatted" ]; then echo "make test: gofmt -w these files first:"; echo "$$unformatted"; exit 1; fi
	@$(GO) vet ./...
	@PLAYWRIGHT_NODEJS_PATH=$$(command -v node) $(GO) test -count=1 -timeout 45m ./...
	@echo "make test: the race detector on the tests of shared state (the settings cache, the sign-in throttle, the pages)"
	@$(GO) test -race -count=1 -timeout 15m -run '$(RACE_TESTS)' ./app/snapshots ./app/web ./app/api

## soak: TestADayInTheLife's long form, 30 minutes of agents and the person under faults (as root)
soak: deps
	@$(GO) test -count=1 -timeout 45m -run TestADayInTheLife -soak=30m -v ./e2e/

## bench: start-up time of boxsnap serve to its first HTTP 200 (first and warm start, medians)
bench: build
	@$(GO) run ./bench/startup -binary $(BIN) -runs 5

## shape: each package's lines, its files' arrows and how many run back up, the types over 20 methods, the longest functions
shape:
	@$(GO) run ./tools/shape

vet:
	@$(GO) vet ./...

clean:
	rm -rf bin .cache
