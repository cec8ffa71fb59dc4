# Run `make help` for the targets.
GO ?= go

.PHONY: help build test race ci fmt vet tidy

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build ./crawlkeeper
	CGO_ENABLED=0 $(GO) build -o crawlkeeper ./cmd/crawlkeeper

test: ## run the tests with the race detector (the README's test command)
	$(GO) test -race ./...

ci: ## run what CI runs, services included
	bash .ci/run

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

vet: ## go vet
	$(GO) vet ./...

tidy: ## tidy go.mod
	$(GO) mod tidy
