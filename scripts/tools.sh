#!/usr/bin/env bash
# Installs exhub's pinned Go tools into bin/ (or $EXHUB_BIN_DIR), each only when it is missing or of another version:
#   scripts/tools.sh            every tool
#   scripts/tools.sh mailpit    Mailpit, the demo mail and SMS inbox (SMTP + REST API) that `make run` starts
# The versions below are the pins; `go version -m` reads the version a binary was built from.
set -euo pipefail

MAILPIT_MODULE=github.com/axllent/mailpit
MAILPIT_VERSION=v1.27.11

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${EXHUB_BIN_DIR:-$root/bin}
go=${GO:-go}

# built_version prints the main module version a Go binary was built from, or nothing.
built_version() {
  [ -x "$1" ] || return 0
  "$go" version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'
}

install_go_tool() { # name module version
  local name=$1 module=$2 version=$3 have
  have=$(built_version "$bin/$name")
  if [ "$have" = "$version" ]; then
    touch "$bin/$name" # up to date: tell make so
    return 0
  fi
  echo "installing $name $version${have:+ (was $have)} into $bin"
  mkdir -p "$bin"
  GOBIN="$bin" GOFLAGS=-buildvcs=false "$go" install "$module@$version"
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(mailpit)
for t in "${tools[@]}"; do
  case $t in
    mailpit) install_go_tool mailpit "$MAILPIT_MODULE" "$MAILPIT_VERSION" ;;
    *) echo "tools.sh: unknown tool '$t' (known: mailpit)" >&2; exit 2 ;;
  esac
done
