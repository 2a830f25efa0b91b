# make run    set up, then run the mailing-list benchmark (bridge run hmac-sha1)
# make test-py310  the fast tier (as test-fast) under Python 3.10, the oldest
#             supported, in its own .venv310 (scripts/python310 finds the 3.10)
# make test   set up, then run the test suite (all tiers, real runtimes): the
#             serial tests alone, then the rest in two sessions at once
# make test-fast  the in-process tier only: unit tests and the session with fake runtimes
# make bench  bridge's overhead and wall times, bridge against independent
#             harnesses (bench/agreement.py), and whether a rerun lands in the
#             CI (bench/coverage.py)
# make lint   ruff (lint + format check), the import layers (lint-imports, see
#             pyproject.toml), erlc with all warnings as errors, and
#             dialyzer on erl/ (scripts/dialyzer.sh; builds its PLT on first use)
# make setup  install what is missing: Erlang + crypto, openssl, ./.venv
# make docs   check the generated pages (scripts/gen-docs --check), build the
#             site in strict mode into site/ (installs the docs extra if missing),
#             then open it from disk in headless Chromium (tests/docs_site)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

PY310_VENV  := .venv310
PY310_STAMP := $(PY310_VENV)/.installed

# How many pytest sessions run side by side (pytest-xdist -n) in make test's
# second pass, test-fast and test-py310; 0 runs the tests in pytest's own.
TEST_JOBS ?= 2

.PHONY: setup system run test test-fast test-py310 lint bench docs clean

setup: system $(STAMP)
	@$(BIN)/python -m bridge.cli.names

system:
	@scripts/ensure-system.sh

# Reinstall when the package's metadata changes. Editable, so code changes
# need no reinstall.
# The distribution was called `bridge` before it was crypto-bridge: an old
# editable install of it is removed first. Then one line if the `bridge` on
# PATH is another program (iproute2's), with what to run instead.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@$(BIN)/python -m pip uninstall -q -y bridge 2>/dev/null || true
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

run: setup
	$(BIN)/crypto-bridge run hmac-sha1

# The cross-version tests need Debian bullseye's OTP 23 and OpenSSL 1.1.1w,
# unpacked into the cache (about a second once there), once, before the
# sessions that use them start. When the fetch fails, those tests fail with
# its reason; the rest still run. The tests of why a path does not use the
# hardware need OpenSSL built without assembler (scripts/build-noasm-openssl:
# Debian trixie's source, C only; minutes of 2 cores the first time, then
# cached): it builds in the background while the runtimes are fetched and
# the bytecode compiled, and is waited for before the tests start, the
# serial ones needing the machine to themselves. The HTML page's tests open
# it in headless Chromium: Debian's chromium is installed first where it is
# missing (scripts/ensure-chromium; make setup leaves it out, as bridge
# itself does not use it).
# Two passes, about 16 minutes on 2 quiet cores: the tests marked serial first,
# one at a time with the machine to themselves (verdicts and measured effects,
# signals and kills timed against a run, machine-wide checks: see the marker
# in pyproject.toml), then all the others in TEST_JOBS sessions side by side
# (pytest-xdist). Both passes always run; make test fails if either does.
# The tests start bridge in subprocesses hundreds of times (the CLI, its
# Python workers): its bytecode is compiled first, so that each start reads
# it instead of compiling bridge's modules again, as every start does where
# PYTHONDONTWRITEBYTECODE is set (as it is in this project's sessions): about
# 0.3 s of CPU a start, nearly 2 minutes a run. Nothing under test changes; a
# checkout it cannot write to is tested all the same.
# The same holds for pytest's own bytecode: each session rewrites the asserts
# of every test module it collects (about 6.6 s of CPU of a collection's 9.9)
# and, where PYTHONDONTWRITEBYTECODE is set, keeps none of it. The serial pass
# (which collects every module) runs with it unset, so that it keeps the
# rewritten modules in tests/'s __pycache__ for the two sessions after it
# (a collection then takes 3.3 s of CPU).
test: setup
	@scripts/ensure-chromium "make test"
	@scripts/build-noasm-openssl --retry >/dev/null & noasm=$$!; \
	scripts/fetch-runtimes >/dev/null || echo "make test: scripts/fetch-runtimes failed (see above)" >&2; \
	$(BIN)/python -m compileall -q bridge >/dev/null 2>&1 || true; \
	wait $$noasm || echo "make test: scripts/build-noasm-openssl failed (see above)" >&2
	@rc=0; \
	echo "make test: pass 1 of 2, serial: pytest -m serial" >&2; \
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -m serial || rc=1; \
	echo "make test: pass 2 of 2: pytest -n $(TEST_JOBS) --dist loadgroup -m 'not serial'" >&2; \
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadgroup -m "not serial" || rc=1; \
	exit $$rc

# No Erlang or openssl needed: only the venv. In-process tests (none is marked
# serial), in TEST_JOBS sessions side by side.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) tests/unit tests/session

# The oldest Python bridge supports (requires-python): the in-process tier,
# which covers the code paths a version difference breaks (the report codec,
# TOML, enums, statistics); the real-runtime tiers run on the venv's Python.
$(PY310_STAMP): pyproject.toml
	@test -x $(PY310_VENV)/bin/python || "$$(scripts/python310)" -m venv $(PY310_VENV)
	$(PY310_VENV)/bin/python -m pip install -q --upgrade pip
	$(PY310_VENV)/bin/python -m pip install -q -e '.[test]'
	@touch $@

test-py310: $(PY310_STAMP)
	$(PY310_VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(TEST_JOBS) tests/unit tests/session

lint: setup
	$(BIN)/ruff check bridge tests bench
	$(BIN)/ruff format --check bridge tests bench
	$(BIN)/lint-imports --no-cache
	$(BIN)/vulture bridge --min-confidence 80
	@d=$$(mktemp -d) && erlc +warn_all +warnings_as_errors -o $$d erl/*.erl tests/erl/*.erl bench/harness/*.erl; rc=$$?; rm -rf $$d; exit $$rc
	scripts/dialyzer.sh

# bridge's own overhead and wall times, then bridge against independent
# harnesses (bench/agreement.py: several minutes; it prints the load).
bench: setup
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/agreement.py
	$(BIN)/python bench/coverage.py

# The site: the generated pages must be current (cli.md, crypto-bridge.1 and the
# findings' render blocks), then mkdocs builds it in strict mode (a broken link
# or anchor fails). mkdocs-material comes from the `docs` extra, installed
# into the venv the first time.
# Then the built site is opened from disk in headless Chromium (Debian's
# chromium, installed here when missing and apt-get can): every nav link
# must open a page, search must find pages (tests/docs_site).
docs: $(STAMP)
	@test -x $(BIN)/mkdocs || $(BIN)/python -m pip install -q -e '.[docs]'
	$(BIN)/python scripts/gen-docs --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q -d site
	@scripts/ensure-chromium "make docs"
	BRIDGE_SITE_DIR=site $(BIN)/python -m pytest -q -p no:cacheprovider tests/docs_site

clean:
	rm -rf $(VENV) $(PY310_VENV) .pytest_cache .ruff_cache .hypothesis site
