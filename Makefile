# Run `make help` for the targets.
GO ?= go

.PHONY: help build test race long ci fmt vet tidy dashboard-assets

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-17s %s\n", $$1, $$2}'

build: ## build ./crawlkeeper
	CGO_ENABLED=0 $(GO) build -o crawlkeeper ./cmd/crawlkeeper

test: ## run the tests and say which ran and which were skipped and why (the README's test command)
	$(GO) run ./internal/testrun

race: ## the same tests with the race detector, as CI runs them
	$(GO) run ./internal/testrun -race -count=1 -timeout 30m

long: ## the long suites CI runs: crash, torture, load and benchmark tests, 1M-record memory bounds, fuzzing (.ci/long)
	bash .ci/long

ci: ## run what CI runs, services included
	bash .ci/run

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

vet: ## go vet
	$(GO) vet ./...

tidy: ## tidy go.mod
	$(GO) mod tidy

dashboard-assets: ## install the dashboard's chart library from dashboard/package-lock.json and copy it into dashboard/assets/vendor/
	cd dashboard && npm ci --no-audit --no-fund --ignore-scripts
	mkdir -p dashboard/assets/vendor
	cp dashboard/node_modules/uplot/dist/uPlot.iife.min.js dashboard/node_modules/uplot/dist/uPlot.min.css dashboard/assets/vendor/
	cp dashboard/node_modules/uplot/LICENSE dashboard/assets/vendor/uPlot.LICENSE
