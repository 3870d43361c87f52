#!/usr/bin/env bash
# Starts the whole stack (bin/exhub-stack), runs the Chromium end-to-end tests against http://127.0.0.1:8080 through
# the edge, then stops the stack by its PID and checks it stopped cleanly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logdir="$root/.data/e2e"
mkdir -p "$logdir"
ready="$logdir/ready"
rm -f "$ready"

# A short second-factor window for money leaving the account, so ui/e2e/wallet-2fa.e2e.mjs can wait it out (the
# stack's BFF and the test both read it).
export EXHUB_WALLET_SECOND_FACTOR_WINDOW="${EXHUB_WALLET_SECOND_FACTOR_WINDOW:-20s}"
bin/exhub-stack --root "$root" --ready-file "$ready" >"$logdir/stack.log" 2>&1 &
pid=$!
stop_stack() {
  if kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid" 2>/dev/null || true
    # The stack stops its services one by one, each SIGKILLed after 15 s: this bound is only for a stuck supervisor.
    for _ in $(seq 1 1200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { echo "e2e: stack did not stop in 120 s; killing $pid" >&2; kill -KILL "$pid"; }
  fi
  wait "$pid" 2>/dev/null || true
}
trap stop_stack EXIT

# Each service has its own start-up bound in exhub-stack (which then exits with the reason); this one is only for a
# supervisor that neither gets ready nor exits.
for _ in $(seq 1 6000); do
  [ -f "$ready" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "e2e: the stack failed to start; its log:" >&2
    tail -n 80 "$logdir/stack.log" >&2
    exit 1
  fi
  sleep 0.1
done
[ -f "$ready" ] || { echo "e2e: stack not ready after 600 s; its log:" >&2; tail -n 80 "$logdir/stack.log" >&2; exit 1; }
echo "e2e: stack up at $(cat "$ready")"

code=0
# --perf runs the performance checks (ui/e2e/perf/) instead, for `make bench` on an idle machine. E2E_FILES (a
# space-separated list of paths) runs only those files, for working on one screen.
read -r -a files <<<"${E2E_FILES:-$(echo ui/e2e/*.e2e.mjs)}"
[ "${1:-}" = "--perf" ] && files=(ui/e2e/perf/*.e2e.mjs)
EXHUB_URL="$(head -n1 "$ready")" node --test --test-timeout=300000 "${files[@]}" || code=$?
if [ $code -ne 0 ]; then
  echo "e2e: failed; last lines of the stack log:" >&2
  tail -n 60 "$logdir/stack.log" >&2
fi
trap - EXIT
stop_stack
if grep -q "did not stop in time" "$logdir/stack.log"; then
  echo "e2e: a service did not stop cleanly" >&2
  code=1
fi
exit $code
