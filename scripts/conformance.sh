#!/usr/bin/env bash
# Runs `pluginctl conformance` against every plugin of the repo: the reference exchange on its own, and the
# exchange plugins against their local emulators (started here on free loopback ports, stopped by PID after).
# Each plugin must pass the checks its plugins/<slug>/conformance.expect lists; the unknown-outcome check arms
# lost answers through the fault endpoint (faults.Path) of the reference and of the emulators.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=bin

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
bport=$(free_port); oport=$(free_port); yport=$(free_port); rport=$(free_port)
logdir=.data/conformance; mkdir -p "$logdir"
# Funding every 5 s: the funding-payments check waits for a settlement.
"$bin/exhub-emulators" --binance "127.0.0.1:$bport" --okx "127.0.0.1:$oport" --bybit "127.0.0.1:$yport" --history-days 3 --funding-interval 5s >"$logdir/emulators.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
  curl -fs "http://127.0.0.1:$bport/-/ready" >/dev/null 2>&1 && curl -fs "http://127.0.0.1:$oport/-/ready" >/dev/null 2>&1 && curl -fs "http://127.0.0.1:$yport/-/ready" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "conformance: emulators failed to start:" >&2; cat "$logdir/emulators.log" >&2; exit 1; }
  sleep 0.1
done

settings() { # slug -> --set flags
  "$bin/exhub-emulators" --print-settings --binance "127.0.0.1:$bport" --okx "127.0.0.1:$oport" --bybit "127.0.0.1:$yport" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=JSON.parse(s)[process.argv[1]];for(const k of Object.keys(o).sort())console.log("--set\n"+k+"="+o[k])})' "$1"
}
account() { # slug -> --account-* flags (none for an emulator without a demo account)
  "$bin/exhub-emulators" --print-accounts |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=JSON.parse(s)[process.argv[1]];if(!a)return;console.log("--account-key\n"+a.api_key+"\n--account-secret\n"+a.api_secret);if(a.passphrase)console.log("--account-passphrase\n"+a.passphrase)})' "$1"
}

code=0
echo "== reference"
"$bin/pluginctl" conformance --account-key conformance --expect plugins/reference/conformance.expect \
  --set "fault_listen=127.0.0.1:$rport" --set funding_interval=5s --fault-url "http://127.0.0.1:$rport" "$bin/plugins/reference" || code=1
for slug in binance okx bybit; do
  echo "== $slug (emulator)"
  port=$bport; [ "$slug" = okx ] && port=$oport; [ "$slug" = bybit ] && port=$yport
  mapfile -t flags < <(settings "$slug"; account "$slug")
  "$bin/pluginctl" conformance "${flags[@]}" --expect "plugins/$slug/conformance.expect" \
    --fault-url "http://127.0.0.1:$port" "$bin/plugins/$slug" || code=1
done
exit $code
