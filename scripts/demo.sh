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
echo "sandbox: $url (2 groups of 12 jobs, G1 and G2, and the ids of the README's table; key demo-key)"
echo "  a smaller dataset than the README's 'bl sandbox serve' (40 jobs per group, key sandbox-key),"
echo "  so that the demo runs in seconds; BENCHLOOP_HOST and BENCHLOOP_API_KEY point bl at it"
export BENCHLOOP_HOST="$url" BENCHLOOP_API_KEY=demo-key BENCHLOOP_CONFIG="$OUT/.config.toml"

# Print the command quoted so that it can be pasted into any POSIX shell, run it, show its exit code.
show() {
  local quoted="" arg
  for arg in "$@"; do
    case $arg in
      *[!A-Za-z0-9_./:=,@%+-]*|"") quoted+=" '${arg//\'/\'\\\'\'}'" ;;
      *) quoted+=" $arg" ;;
    esac
  done
  printf '%s' "${quoted# }"
}
run() {
  echo
  echo "\$ bl $(show "$@")"
  set +e
  "$BL" "$@"
  code=$?
  set -e
  echo "(exit $code)"
}
# A failure that is meant to happen: say so before it runs.
fails() {
  local why=$1
  shift
  echo
  echo "# this one fails on purpose: $why"
  echo "\$ bl $(show "$@")"
  set +e
  "$BL" "$@"
  code=$?
  set -e
  echo "(exit $code, as intended)"
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
echo
echo "# this one fails on purpose: NOPE-404 is an unknown id (exit 1; G1-J0001 is still printed)"
echo "\$ echo G1-J0001 NOPE-404 | bl --no-pretty report get -j -"
set +e; echo G1-J0001 NOPE-404 | "$BL" --no-pretty report get -j -; echo "(exit $?, as intended)"; set -e
fails "nothing listens on port 9 (network error, exit 4)" --host http://127.0.0.1:9 --retry 0 metrics get -j G1-J0001
fails "-g and -j together (usage error, exit 2)" metrics get -g G1 -j G1-J0001

# bl compare: the sandbox's runs of one SWE-bench-like benchmark (160 jobs each), instance by instance.
echo
echo "# bl compare: is a candidate better than the baseline? One verdict per candidate, then the figures"
run compare -g BASE,CAND,CAND2 --output table
echo
echo "# REPO-CAND's gain sits in three repositories: significant as independent instances, not by repository"
run compare -g REPO-BASE,REPO-CAND --query '[0].summary'
run compare -g REPO-BASE,REPO-CAND --cluster '^(.+?)__' --query '[0].summary'
run compare -g BASE,CAND2 --by template --cluster '^(.+?)__' --output table \
  --query '[0].slices[].{template: key, jobs: baseline_jobs, paired: paired.instances, change: paired.pass_rate_difference, verdict: paired.verdict}'
run compare -g BASE,CAND --report "$OUT/compare.html" --query '[0].paired.{verdict: verdict, mde: mde}'
fails "a --metric that scores no job is an error naming it (exit 1)" compare -g BASE,CAND --metric 'metrics[0].nope'
echo
echo "Files written under $OUT/:"
find "$OUT" -type f ! -name '.*' | sort | while read -r f; do printf '  %-40s %6d bytes\n' "$f" "$(wc -c <"$f")"; done
echo
echo "$OUT/G2_report.md:"
sed 's/^/  | /' "$OUT/G2_report.md"
echo
echo "# ap-cmd: the AgentPlatform command line of a group (the sandbox serves AgentPlatform too;"
echo "# its cluster comes from Benchloop's record of the group, the key from AP_API_KEY)"
echo "\$ AP_API_KEY=ap-sandbox-key bl ap-cmd APG-PROFILE --ap-base-url <sandbox> --trials 5 --my-flag on"
AP_API_KEY=ap-sandbox-key "$BL" ap-cmd APG-PROFILE --ap-base-url "$BENCHLOOP_HOST" --trials 5 --my-flag on

# bl view: from a changed instance to the step where the agent went wrong.
echo
echo "# bl view: CAND2 fixed requests__requests-2334; a failing BASE trial and a passing CAND2 trial side by side"
run compare -g BASE,CAND2 --report-dir "$OUT/compare-report" --query '[0].instances[0].instance'
run view --instance requests__requests-2334 -g BASE -g CAND2 --output table --query '[].{job: job_id, pass: pass, first_difference: steps[?first_difference].step | [0]}'
run view --instance requests__requests-2334 -g BASE -g CAND2 -o "$OUT"
echo
echo "Open $OUT/requests__requests-2334_BASE_vs_CAND2_view.html (or bl view ... --open): the first"
echo "difference (step 8) is marked and linked from the top; $OUT/compare-report/index.html links every changed instance."
