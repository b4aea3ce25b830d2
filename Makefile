# Ringbook: the two set-up commands are `make run` and `make test`; both install what they need.
SHELL := /bin/bash
NODE ?= node

.PHONY: install build run test bench clean

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

build: install
	npx tsc -p tsconfig.json

run: build
	$(NODE) dist/src/main.js

test: build
	npx vitest run

bench: build
	@for b in $(BENCHES); do echo "== $$b"; $(NODE) --expose-gc dist/bench/$$b.js || exit 1; done

BENCHES ?= matcher

clean:
	rm -rf dist node_modules
