#!/usr/bin/env bash
# Makes, from Debian's mirror and this machine's Node.js, the base images that the Dockerfile and
# deploy/compose name, for a Docker that cannot reach an image registry (CI, air-gapped hosts).
# Where a registry is reachable there is no need for this: Docker pulls the real images.
#
#   sudo deploy/base-image.sh            # makes whichever of the four images is missing
#
# - debian:bookworm-slim      debootstrap --variant=minbase bookworm, imported
# - node:20-bookworm-slim     that, plus the node binary and npm of this machine (Node 20)
# - pgvector/pgvector:pg15    that, plus Debian's PostgreSQL 15 (bookworm has no pgvector: the
#                             memory service then searches without it) and an entrypoint that
#                             reads POSTGRES_USER, POSTGRES_PASSWORD(_FILE) and POSTGRES_DB
# - redis:7-bookworm          that, plus Debian's Redis 7
set -euo pipefail
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

have() { docker image inspect "$1" >/dev/null 2>&1; }

if ! have debian:bookworm-slim; then
  echo "base-image: debian:bookworm-slim from $mirror"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  # What the slim image leaves out, now and from packages installed later: documentation,
  # manual pages, translations, the apt lists and caches.
  cat >"$work/rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
DPKG
  find "$work/rootfs/usr/share/doc" -type f ! -name copyright -delete
  rm -rf "$work/rootfs"/usr/share/man/* "$work/rootfs"/usr/share/info/* \
    "$work/rootfs"/var/lib/apt/lists/* "$work/rootfs"/var/cache/apt/*.bin \
    "$work/rootfs"/var/cache/apt/archives/*.deb
  find "$work/rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  tar -C "$work/rootfs" -c . | docker import \
    --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - debian:bookworm-slim >/dev/null
  rm -rf "$work/rootfs"
fi

if ! have node:20-bookworm-slim; then
  node=$(command -v node)
  case "$("$node" --version)" in v20.*) ;; *) echo "base-image: Node.js 20 is needed on this machine" >&2; exit 1 ;; esac
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  echo "base-image: node:20-bookworm-slim with $("$node" --version) from $node"
  mkdir -p "$work/node"
  cp "$(readlink -f "$node")" "$work/node/node"
  cp -r "$npm_dir" "$work/node/npm"
  docker build -q -t node:20-bookworm-slim -f - "$work/node" >/dev/null <<'DOCKERFILE'
FROM debian:bookworm-slim
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home node
CMD ["node"]
DOCKERFILE
fi

if ! have pgvector/pgvector:pg15; then
  echo "base-image: pgvector/pgvector:pg15 (Debian's PostgreSQL 15, without pgvector)"
  mkdir -p "$work/postgres"
  cat >"$work/postgres/docker-entrypoint.sh" <<'ENTRYPOINT'
#!/bin/sh
# The part of the official image's entrypoint that deployments use: a first start initialises
# PGDATA with POSTGRES_USER, POSTGRES_PASSWORD (or _FILE) and POSTGRES_DB, then runs the server.
set -eu
export PGDATA="${PGDATA:-/var/lib/postgresql/data}"
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  user="${POSTGRES_USER:-postgres}"
  password="${POSTGRES_PASSWORD:-}"
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then password=$(cat "$POSTGRES_PASSWORD_FILE"); fi
  [ -n "$password" ] || { echo "POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE must be set" >&2; exit 1; }
  pwfile=$(mktemp)
  printf '%s\n' "$password" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  db="${POSTGRES_DB:-$user}"
  if [ "$db" != postgres ]; then
    pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
    createdb -U "$user" "$db"
    pg_ctl -D "$PGDATA" -w -m fast stop >/dev/null
  fi
fi
exec "$@"
ENTRYPOINT
  docker build -q -t pgvector/pgvector:pg15 -f - "$work/postgres" >/dev/null <<'DOCKERFILE'
FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN chmod 755 /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
DOCKERFILE
fi

if ! have redis:7-bookworm; then
  echo "base-image: redis:7-bookworm (Debian's Redis 7)"
  docker build -q -t redis:7-bookworm - >/dev/null <<'DOCKERFILE'
FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
DOCKERFILE
fi
