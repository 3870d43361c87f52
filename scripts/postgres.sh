#!/usr/bin/env bash
# A local PostgreSQL for development and `make go-test`, from Debian's server binaries (package postgresql).
#   scripts/postgres.sh start        initialise .data/postgres on first use, start it on 127.0.0.1 (idempotent),
#                                    create the database "exhub"
#   scripts/postgres.sh stop         stop it (fast shutdown)
#   scripts/postgres.sh dsn [db]     print the DSN of database db (default exhub)
# Environment: EXHUB_POSTGRES_PORT (default 55432), EXHUB_POSTGRES_DIR (default <repo>/.data/postgres),
# EXHUB_POSTGRES_BIN (default: the newest /usr/lib/postgresql/<version>/bin).
# The cluster trusts connections from 127.0.0.1 (role postgres, no password): a local development server only.
# PostgreSQL refuses to run as root; as root the server runs as the postgres system user and owns the data dir
# (under /tmp/exhub-postgres-<hash of the checkout> when the postgres user cannot reach <repo>/.data).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${EXHUB_POSTGRES_DIR:-$root/.data/postgres}
port=${EXHUB_POSTGRES_PORT:-55432}
data=$dir/cluster
log=$dir/postgres.log

dsn() { echo "postgres://postgres@127.0.0.1:$port/${1:-exhub}?sslmode=disable"; }

bin=${EXHUB_POSTGRES_BIN:-}
if [ -z "$bin" ]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4n | tail -n1 || true)
fi

case "${1:-}" in
  dsn) dsn "${2:-}"; exit 0 ;;
  start|stop) ;;
  *) echo "usage: $0 start|stop|dsn [db]" >&2; exit 2 ;;
esac

if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then
  echo "PostgreSQL server binaries not found (looked in /usr/lib/postgresql/<version>/bin)." >&2
  echo "install them with:  sudo scripts/apt-deps.sh   (Debian package postgresql)" >&2
  exit 1
fi

as_pg=()
if [ "$(id -u)" = 0 ]; then
  as_pg=(runuser -u postgres --)
  # The server runs as postgres, which must reach its data dir. A checkout under a private directory (a mktemp -d
  # clone, a 0700 home) is out of its reach: keep the cluster under /tmp then, one per checkout.
  parent=$(dirname "$dir")
  mkdir -p "$parent"
  if [ -z "${EXHUB_POSTGRES_DIR:-}" ] && ! runuser -u postgres -- test -x "$parent"; then
    dir=/tmp/exhub-postgres-$(printf '%s' "$root" | sha256sum | cut -c1-12)
    data=$dir/cluster
    log=$dir/postgres.log
  fi
  # Every path below is absolute; the postgres user may not be able to enter the working directory.
  cd /
fi

running() { [ -f "$data/PG_VERSION" ] && "${as_pg[@]}" "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; }

if [ "$1" = stop ]; then
  if running; then
    "${as_pg[@]}" "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
    echo "postgres: stopped"
  fi
  exit 0
fi

if ! running; then
  mkdir -p "$dir"
  [ ${#as_pg[@]} -gt 0 ] && chown postgres: "$dir"
  chmod 700 "$dir"
  if [ ! -f "$data/PG_VERSION" ]; then
    (cd "$dir" && "${as_pg[@]}" "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1) || {
      cat "$dir/initdb.log" >&2; exit 1; }
  fi
  if ! (cd "$dir" && "${as_pg[@]}" "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null); then
    echo "postgres did not start (port $port busy? set EXHUB_POSTGRES_PORT); last lines of $log:" >&2
    tail -n 20 "$log" >&2 || true
    exit 1
  fi
fi

psql=("${as_pg[@]}" "$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1)
if [ "$("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = 'exhub'")" != 1 ]; then
  "${psql[@]}" -c "CREATE DATABASE exhub"
fi
echo "postgres: $(dsn)"
