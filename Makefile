# Atrium: `make start` runs everything with embedded defaults; `make test` runs every test.
SHELL := bash
STAMP := node_modules/.atrium-install-stamp

.PHONY: start test lint format gen check-gen check-version build typecheck bench install clean

# Installs when node_modules is missing or older than a manifest or the lockfile.
$(STAMP): package.json package-lock.json $(wildcard packages/*/package.json)
	npm ci --no-audit --no-fund
	@touch $@

install: $(STAMP)

build: $(STAMP)
	npx tsc -b
	node scripts/prepare-glove.mjs
	npm run --silent build -w @atrium/console

start: build
	node packages/server/dist/main.js start

test: build
	node scripts/run-tests.mjs

lint: $(STAMP)
	npx biome check .
	npx tsc -p tsconfig.check.json

format: $(STAMP)
	npx biome check --write .

gen: $(STAMP)
	bash scripts/gen.sh

# Fails when regenerating code or OpenAPI documents changes anything committed.
check-gen: gen
	@git diff --exit-code --stat -- packages/api/src/gen openapi || \
	  (echo "generated files are stale: run 'make gen' and commit the result" >&2; exit 1)
	@test -z "$$(git status --porcelain -- packages/api/src/gen openapi)" || \
	  (echo "generated files are untracked: run 'make gen' and commit the result" >&2; exit 1)

# Fails when a stamped file, CHANGELOG.md's top heading or the newest tag disagrees with VERSION.
check-version:
	node scripts/check-version.mjs

bench: build
	node --conditions=atrium-source --import tsx bench/run.ts $(ARGS)

clean:
	rm -rf packages/*/dist node_modules $(STAMP)
