#!/usr/bin/env bash
# Installs the ClickHouse engine library (libchdb.so, pinned in package.json / package-lock.json) into
# analytics/clickhouse/node_modules with `npm ci`. Idempotent: does nothing when the pinned version is present.
set -euo pipefail
cd "$(dirname "$0")"

pkg=node_modules/@chdb/lib-linux-x64-gnu
want=$(node -e 'process.stdout.write(require("./package.json").dependencies["@chdb/lib-linux-x64-gnu"])')
have=$( [ -f "$pkg/package.json" ] && node -e 'process.stdout.write(require("./'"$pkg"'/package.json").version)' || true)

if [ "$have" = "$want" ] && [ -s "$pkg/libchdb.so" ]; then
  exit 0
fi
if [ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]; then
  echo "the local ClickHouse library is only packaged for Linux x86_64 (this is $(uname -s)/$(uname -m))" >&2
  exit 1
fi
echo "installing the ClickHouse library @chdb/lib-linux-x64-gnu@$want (about 180 MB download)"
npm ci --no-audit --no-fund --loglevel=error
touch node_modules/.stamp
