#!/usr/bin/env bash
# Regenerates packages/api/src/gen and openapi/ from proto/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
buf lint
buf generate
# The chat API is Fastify routes, not proto: its document comes from the routes' own schemas.
node --conditions=atrium-source --import tsx tools/chat-openapi/main.ts
# The operator routes of memory and the gateway likewise, each in its own document.
node --conditions=atrium-source --import tsx tools/operator-openapi/main.ts
# TypeScript types of every document (openapi-typescript), for openapi-fetch clients.
for document in openapi/*.openapi.json; do
  openapi-typescript "$document" --output "packages/api/src/gen/openapi/$(basename "$document" .openapi.json).ts" --silent
done
