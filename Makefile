# Ringbook: the two set-up commands are `make run` and `make test`; both install what they need.
SHELL := /bin/bash
NODE ?= node

.PHONY: install build native chromium nats run test bench clean

# Debian packages the targets below install when missing: apt-get as root (CI, containers), else
# through sudo when there is one (a developer's machine); empty when neither works, and each
# target then says what to install by hand.
APT_GET := $(shell if ! command -v apt-get >/dev/null 2>&1; then :; elif [ "$$(id -u)" = 0 ]; then echo apt-get; \
  elif command -v sudo >/dev/null 2>&1; then echo sudo apt-get; fi)
# $(call apt_install,PKG): the package lists are updated first only when they do not know PKG (a
# fresh container has none: installing first would print a spurious "Unable to locate package"),
# and once more if the install fails on stale lists (a mirror that dropped the listed version).
apt_install = { apt-cache show $(1) >/dev/null 2>&1 || $(APT_GET) update; } && \
  { $(APT_GET) install -y $(1) || { $(APT_GET) update && $(APT_GET) install -y $(1); }; }

# `npm install` (not `npm ci`): npm 11 leaves msgpackr-extract's other-platform optional
# packages out of the lock file and `npm ci` then refuses it as out of sync. `npm install`
# installs exactly the locked versions here and leaves the lock file unchanged.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund
	@touch $@

install: node_modules/.installed

build: install
	npx tsc -p tsconfig.json
	npx tsc -p web/tsconfig.json
	$(NODE) dist/src/web/bundle.js
	$(NODE) dist/src/settlement/compile_contracts.js

# The C references and tools of native-bench/ and the server's native modules native/ (the ring's
# doorbell futex, the loop bell: without them the rings use Atomics; signature recovery through
# Debian's libsecp256k1: without it the `secp256k1` npm addon), built with the machine's cc. A
# machine without a C compiler gets Debian's build-essential first, and one without libsecp256k1's
# headers gets libsecp256k1-dev, so a fresh clone needs nothing by hand. The header is looked for
# where native/Makefile looks (SECP256K1_HEADER there).
native:
	@command -v cc >/dev/null 2>&1 || { [ -n "$(APT_GET)" ] || { echo "native: no C compiler (cc), and no apt-get as root or with sudo to install build-essential" >&2; exit 1; }; \
	  $(call apt_install,build-essential); }
	@[ -f /usr/include/secp256k1_recovery.h ] || [ -f /usr/local/include/secp256k1_recovery.h ] || \
	  { [ -n "$(APT_GET)" ] && $(call apt_install,libsecp256k1-dev); } || \
	  echo "native: libsecp256k1-dev could not be installed (apt-get failed, or none as root or with sudo): signatures are recovered with the secp256k1 npm addon"
	$(MAKE) -C native-bench
	$(MAKE) -C native

# Debian's Chromium for the web view's browser tests (test/web/, docs/web.md), when it is missing.
CHROMIUM ?= $(or $(RINGBOOK_CHROMIUM),/usr/bin/chromium)
chromium:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	echo "installing Debian's chromium for the browser tests (test/web)"; \
	if [ -z "$(APT_GET)" ]; then \
	  echo "cannot install Chromium here (needs apt-get as root or with sudo): install Debian's chromium so that $(CHROMIUM) exists, or point RINGBOOK_CHROMIUM at a Chromium binary" >&2; exit 1; fi; \
	$(call apt_install,chromium) || { \
	  echo "apt-get could not install chromium: the browser tests (test/web) need $(CHROMIUM)" >&2; exit 1; }; \
	[ -x $(CHROMIUM) ] || { echo "chromium is installed but $(CHROMIUM) is not there: set RINGBOOK_CHROMIUM to its path" >&2; exit 1; }

# NATS JetStream for the cluster roles and their tests (docs/scale-out.md): Debian's nats-server.
nats:
	@command -v nats-server >/dev/null 2>&1 || { [ -n "$(APT_GET)" ] || { echo "nats: nats-server is missing, and no apt-get as root or with sudo to install it" >&2; exit 1; }; \
	  $(call apt_install,nats-server); }

run: build native
	$(NODE) dist/src/main.js

test: build native chromium nats
	npx vitest run

bench: build native
	@for b in $(BENCHES); do \
	  if [ -f dist/bench/$$b.js ]; then echo "== $$b"; $(NODE) --expose-gc dist/bench/$$b.js || exit 1; \
	  else echo "== $$b: not built (dist/bench/$$b.js missing)"; exit 1; fi; done

# One bench per stage, then end to end; each ends with one JSON line (docs/benchmarks.md).
# doorbell and front_wake (the ring's wake-ups, ~11 s and about half a minute: 5,000 pings with a
# 0.3 ms pause, each wait bounded) follow ring.
BENCHES ?= money matcher ring doorbell front_wake verify verify_queue verify_consent fills_tree journal recovery state_root ws_fanout load order_entry settlement_gas metrics rate_limit observer_tape read_model_heap post_body_bytes signed_parse address_rows front_floor signed_front

clean:
	rm -rf dist node_modules
	$(MAKE) -C native-bench clean
	$(MAKE) -C native clean
