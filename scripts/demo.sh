#!/usr/bin/env bash
# `make demo`: start the sandbox backend, run real `bl` commands against it,
# show what they printed and wrote, then stop the sandbox.
set -euo pipefail
cd "$(dirname "$0")/.."
BL=.venv/bin/bl
OUT=demo-out
rm -rf "$OUT"
mkdir -p "$OUT"
log="$OUT/.sandbox.log"
.venv/bin/python -m benchloop.sandbox --port 0 --groups 2 --jobs-per-group 12 --api-key demo-key >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "sandbox serving" "$log" 2>/dev/null && break
  sleep 0.1
done
url=$(grep -o 'http://[0-9.:]*' "$log" | head -n1)
[ -n "$url" ] || { echo "sandbox did not start:"; cat "$log"; exit 1; }
echo "sandbox: $url"
export BENCHLOOP_HOST="$url" BENCHLOOP_API_KEY=demo-key BENCHLOOP_CONFIG="$OUT/.config.toml"

run() {
  echo
  echo "\$ bl $*"
  set +e
  "$BL" "$@"
  code=$?
  set -e
  echo "(exit $code)"
}
run --no-pretty metrics get -j G1-J0001,G1-J0002
run metrics get -g G1 --scope overall
run overview get -j G1-J0003
run --no-pretty jobs get -g G1 --page 2 --page-size 3
run tasks download -g G1,G2 -o "$OUT"
run jobs download -g G1 -o "$OUT"
run report download -g G2 -o "$OUT"
run metrics download -g G1 -o "$OUT"
run --no-pretty report trigger -g G1 --include-passed
run trajectory download --task-id T1 -o "$OUT"
run --no-pretty artifacts download -j G1-J0001,G1-J0006 --list-only
run pull -j G1-J0002 --with metrics,trajectory,report,artifacts -o "$OUT"
run jobs get -g G1 --page-size 4 --query '[0].jobs' --output table
echo "G1-J0001 NOPE-404" > "$OUT/.ids"
echo
echo "\$ echo G1-J0001 NOPE-404 | bl --no-pretty report get -j -"
set +e; "$BL" --no-pretty report get -j - < "$OUT/.ids"; echo "(exit $?)"; set -e
run --host http://127.0.0.1:9 --retry 0 metrics get -j G1-J0001
run metrics get -g G1 -j G1-J0001
echo
echo "Files written under $OUT/:"
find "$OUT" -type f ! -name '.*' | sort | while read -r f; do printf '  %-40s %6d bytes\n' "$f" "$(wc -c <"$f")"; done
echo
echo "$OUT/G2_report.md:"
sed 's/^/  | /' "$OUT/G2_report.md"
