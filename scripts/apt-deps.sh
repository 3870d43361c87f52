#!/usr/bin/env bash
# Installs the Debian packages exhub needs (idempotent). As root it installs them; otherwise it prints the command.
#   valkey-server          cache and fan-out (from the bookworm-backports suite)
#   chromium, fonts        browser end-to-end tests (CJK font for Japanese)
#   postgresql             the member store's production engine; store tests run against it
#   protobuf-compiler      only for `make gen`
set -euo pipefail

want=(chromium fonts-ipafont-gothic valkey-server postgresql protobuf-compiler)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

backports=/etc/apt/sources.list.d/exhub-backports.sources
if [ "$(id -u)" != 0 ]; then
  echo "exhub needs these Debian packages: ${missing[*]}" >&2
  echo "install them with:  sudo scripts/apt-deps.sh   (it adds bookworm-backports for valkey-server)" >&2
  exit 1
fi

# valkey-server is only in bookworm-backports: derive that suite from the machine's own Debian source entry.
if [ ! -f "$backports" ] && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  src=$(grep -ls "^Suites:.*bookworm" /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 || true)
  if [ -n "$src" ]; then
    awk 'BEGIN{RS="";ORS="\n\n"} /Suites:[^\n]*bookworm( |$|\n)/ && !/security/ {sub(/Suites:[^\n]*/,"Suites: bookworm-backports"); print; exit}' "$src" >"$backports"
  elif [ -f /etc/apt/sources.list ]; then
    line=$(grep -E '^deb .* bookworm( |$)' /etc/apt/sources.list | head -n1 || true)
    [ -n "$line" ] && echo "$line" | sed -E 's/ bookworm( |$)/ bookworm-backports\1/' >/etc/apt/sources.list.d/exhub-backports.list
  fi
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
