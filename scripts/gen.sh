#!/usr/bin/env bash
# Regenerates packages/api/src/gen and openapi/ from proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
buf lint
buf generate
