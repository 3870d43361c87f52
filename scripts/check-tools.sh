#!/usr/bin/env bash
# Checks the tools exhub builds with and says in one line what is missing and how to get it.
set -u
fail=0
need() { # name, hint
  command -v "$1" >/dev/null 2>&1 || { echo "exhub: '$1' is not installed: $2" >&2; fail=1; }
}
need go   "install Go 1.26 or newer (exhub's go.mod says go 1.26)"
need node "install Node.js 20 (with npm)"
need npm  "install npm (it comes with Node.js 20)"
need gcc  "install gcc (apt-get install gcc): Kratos is built with cgo for SQLite"
if command -v go >/dev/null 2>&1; then
  v=$(go env GOVERSION 2>/dev/null | sed -E 's/^go([0-9]+)\.([0-9]+).*/\1 \2/')
  set -- $v
  if [ "${1:-0}" -lt 1 ] || { [ "${1:-0}" -eq 1 ] && [ "${2:-0}" -lt 26 ]; }; then
    echo "exhub: Go $(go env GOVERSION) is too old: install Go 1.26 or newer" >&2; fail=1
  fi
fi
if command -v node >/dev/null 2>&1; then
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 20 ] || { echo "exhub: Node.js $(node --version) is too old: install Node.js 20" >&2; fail=1; }
fi
exit $fail
