# exhub: `make run` starts the whole stack in demo mode on http://127.0.0.1:8080; `make test` runs every test.
# Both install what they need (Debian packages when run as root, npm packages, pinned Go tools) and skip work
# already done. `make help` lists the other targets.

SHELL        := /bin/bash
.SHELLFLAGS  := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS    += --no-print-directory

GO       ?= go
NPM      ?= npm
BIN      := $(CURDIR)/bin
TOOLS    := $(CURDIR)/.tools/bin
export GOFLAGS := -buildvcs=false
export EXHUB_BIN_DIR := $(BIN)

PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2

# Hub binaries (target hub-bins): go build is incremental, so they always build and cost a link when nothing changed.
# Separate modules with long cold builds: rebuilt only when their sources change.
KRATOS_SRC := $(shell find bff/kratos -name '*.go' -o -name 'go.mod' -o -name 'go.sum' 2>/dev/null)
EDGE_SRC   := $(shell find edge -name '*.go' -o -name 'go.mod' -o -name 'go.sum' 2>/dev/null)
UI_SRC     := $(shell find ui/app ui/public -type f 2>/dev/null) $(wildcard ui/*.ts ui/*.json ui/*.js)

.PHONY: help run test deps tools apt npm build gen-check hub-bins ui-build gen bench vet go-test edge-test conformance ui-test e2e clean

help:
	@echo "make run     build what is missing and start the whole stack (demo mode): http://127.0.0.1:8080"
	@echo "make test    every test: go vet, go test -race, edge tests, conformance of every plugin, UI typecheck + Vitest, Chromium e2e"
	@echo "make deps    install Debian packages (as root), npm packages, the local ClickHouse library"
	@echo "make build   build every binary into bin/ and the UI into ui/build/client"
	@echo "make gen     regenerate protobuf code and the UI's typed API client"
	@echo "make bench   run the benchmarks and print their figures"
	@echo "make clean   remove bin/ and build outputs (keeps .data/)"

run: deps build
	@$(BIN)/exhub-stack --root $(CURDIR)

# ---- dependencies ------------------------------------------------------------------------------------------------

deps: tools apt npm

tools:
	@scripts/check-tools.sh

apt:
	@scripts/apt-deps.sh

npm: ui/node_modules/.stamp analytics/clickhouse/node_modules/.stamp
	@bff/apidocs/install.sh

ui/node_modules/.stamp: ui/package.json ui/package-lock.json
	cd ui && $(NPM) ci --no-audit --no-fund --loglevel=error
	@touch $@

analytics/clickhouse/node_modules/.stamp: analytics/clickhouse/package.json analytics/clickhouse/package-lock.json
	analytics/clickhouse/install.sh

# ---- build -------------------------------------------------------------------------------------------------------

build: hub-bins $(BIN)/kratos $(BIN)/exhub-edge $(BIN)/mailpit ui-build

hub-bins:
	@mkdir -p $(BIN)/plugins
	$(GO) build -o $(BIN)/exhub-bff ./bff/cmd/exhub-bff
	$(GO) build -o $(BIN)/exhub-stack ./bff/cmd/exhub-stack
	$(GO) build -o $(BIN)/exhub-admin ./bff/cmd/exhub-admin
	$(GO) build -o $(BIN)/exhub-clickhouse ./analytics/cmd/exhub-clickhouse
	$(GO) build -o $(BIN)/exhub-emulators ./adapters/cmd/exhub-emulators
	$(GO) build -o $(BIN)/pluginctl ./plugin-sdk/cmd/pluginctl
	$(GO) build -o $(BIN)/plugins/reference ./plugins/reference
	$(GO) build -o $(BIN)/plugins/binance ./plugins/binance
	$(GO) build -o $(BIN)/plugins/okx ./plugins/okx
	$(GO) build -o $(BIN)/plugins/bybit ./plugins/bybit

$(BIN)/kratos: $(KRATOS_SRC)
	@echo "building Kratos (a few minutes the first time)"
	cd bff/kratos && CGO_ENABLED=1 $(GO) build -tags sqlite -o $@ .

# Mailpit, the demo mail and SMS inbox that `make run` starts (and the Kratos tests): pinned in scripts/tools.sh,
# installed from the Go module proxy when missing or of another version (about 30 s the first time).
$(BIN)/mailpit: scripts/tools.sh
	@scripts/tools.sh mailpit

$(BIN)/exhub-edge: $(EDGE_SRC)
	@echo "building the edge (Caddy; a minute or two the first time)"
	cd edge && $(GO) build -o $@ ./cmd/edge

ui-build: ui/build/client/index.html

ui/build/client/index.html: ui/node_modules/.stamp $(UI_SRC)
	cd ui && $(NPM) run build --silent

# ---- tests -------------------------------------------------------------------------------------------------------

test: deps build vet gen-check go-test edge-test conformance ui-test e2e
	@echo "make test: all passed"

vet:
	$(GO) vet ./...
	cd edge && $(GO) vet ./...

go-test:
	@scripts/postgres.sh start
	@trap 'scripts/postgres.sh stop' EXIT; \
	  EXHUB_TEST_POSTGRES_DSN="$$(scripts/postgres.sh dsn postgres)" $(GO) test -race -count=1 ./...

edge-test:
	cd edge && $(GO) test -count=1 ./...

conformance:
	scripts/conformance.sh

ui-test:
	cd ui && $(NPM) run typecheck --silent && $(NPM) test --silent && node scripts/budget.mjs

e2e:
	scripts/e2e.sh

# ---- generation and benchmarks -----------------------------------------------------------------------------------

$(TOOLS)/protoc-gen-go:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(TOOLS)/protoc-gen-go-grpc:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

gen: apt $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc ui/node_modules/.stamp
	PATH=$(TOOLS):$$PATH protoc -I plugin-sdk/proto \
	  --go_out=plugin-sdk/gen --go_opt=paths=source_relative \
	  --go-grpc_out=plugin-sdk/gen --go-grpc_opt=paths=source_relative \
	  plugin-sdk/proto/exchange/v1/exchange.proto
	$(GO) run ./bff/cmd/exhub-bff openapi > ui/app/api/openapi.json
	cd ui && $(NPM) run gen:api --silent

# gen-check fails when the committed generated code (protobuf, OpenAPI document) is not what `make gen` produces.
gen-check: apt $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	PATH=$(TOOLS):$$PATH protoc -I plugin-sdk/proto --go_out=$$tmp --go_opt=paths=source_relative \
	  --go-grpc_out=$$tmp --go-grpc_opt=paths=source_relative plugin-sdk/proto/exchange/v1/exchange.proto; \
	diff -r $$tmp/exchange plugin-sdk/gen/exchange >/dev/null || { echo "plugin-sdk/gen is stale: run make gen"; exit 1; }; \
	$(BIN)/exhub-bff openapi | diff -q - ui/app/api/openapi.json >/dev/null || { echo "ui/app/api/openapi.json is stale: run make gen"; exit 1; }; \
	echo "generated code is up to date"

# Load tools print a table each and write bench/results/<name>.json (see bench/README.md); about 3 minutes once
# built, plus up to 10 minutes for bench/history and bench/trading. bench/rest, bench/history and bench/trading start
# the whole stack (bin/exhub-stack) on the usual ports, so stop `make run` first.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms -count 1 ./...
	$(GO) run ./bench/book
	$(GO) run ./bench/plugin
	$(GO) run ./bench/stream
	$(GO) run ./bench/rest --stack
	$(GO) run ./bench/trading --stack
	$(GO) run ./bench/analytics
	$(GO) run ./bench/history
	cd ui && BUDGET_JSON=1 node scripts/budget.mjs
	scripts/e2e.sh --perf
	@echo "make bench: figures in bench/results/"

clean:
	rm -rf $(BIN) ui/build
