#!/usr/bin/env bash
# kbound check on python3 and ir, concurrently, in real bwrap: every check reported, a pass earned,
# JSON and JUnit written, no secret in any output, nothing left behind.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R

ids=$(listed_check_ids)
n_ids=$(wc -w <<<"$ids")
[ "$n_ids" -gt 0 ] || fail "kbound check --list-checks listed no checks"

secret="kbound-daemon-secret-$RANDOM$RANDOM$RANDOM"
set +e
t_before=$(date -u +%s)
KBOUND_TEST_DAEMON_TOKEN="$secret" "$KBOUND" check --json "$scratch/r.json" --junit "$scratch/r.xml" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
t_after=$(date -u +%s)
set -e
cat "$scratch/out"
ok "check exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -30 "$scratch/err"
ok "verdict pass" [ "$(json_get "$scratch/r.json" "d['verdict']")" = "pass" ]
# started_at is when the run began, not when its report was written: it and duration_ms together
# end no later than kbound did (a second's slack for the timestamp's whole seconds).
ok "started_at is the run's start (ran $t_before..$t_after)" /usr/bin/python3 - "$scratch/r.json" "$t_before" "$t_after" <<'PY'
import calendar, json, sys, time
d = json.load(open(sys.argv[1]))
before, after = int(sys.argv[2]), int(sys.argv[3])
started = calendar.timegm(time.strptime(d["started_at"], "%Y-%m-%dT%H:%M:%SZ"))
assert before - 1 <= started <= after, (before, started, after)
assert started + d["duration_ms"] / 1000 <= after + 1, (started, d["duration_ms"], after)
PY
ok "both kernels reported" [ "$(json_get "$scratch/r.json" "sorted(k['name'] for k in d['kernels'])")" = "['ir', 'python3']" ]
for k in python3 ir; do
  for id in $ids; do
    st=$(check_status "$scratch/r.json" "$k" "$id")
    case "$k/$id/$st" in
      ir/interrupt.control/unsupported) ok "$k $id is unsupported (IRkernel ignores interrupt_request)" true ;;
      */pass) ok "$k $id pass" true ;;
      *) ok "$k $id pass (got $st)" false ;;
    esac
  done
done
ok "python3 control interrupt raised KeyboardInterrupt" \
  [ "$(json_get "$scratch/r.json" "[c for k in d['kernels'] if k['name']=='python3' for c in k['checks'] if c['id']=='interrupt.control'][0]['evidence'].get('ename')")" = "KeyboardInterrupt" ]
ok "full boundary claimed" [ "$(json_get "$scratch/r.json" "d['claims']['full_boundary']")" = "True" ]
ok "the daemon secret was guarded" [ "$(json_get "$scratch/r.json" "d['sandbox']['secrets_guarded']")" -ge 3 ]
ok "summary line states the claim" grep -q "full boundary" "$scratch/out"
ok "one stdout line per kernel x check" [ "$(grep -cE '^(PASS|FAIL|UNSUPPORTED|NOT CLAIMED) ' "$scratch/out")" -eq $((2 * n_ids)) ]
ok "JUnit parses, $((2 * n_ids)) testcases, 0 failures" /usr/bin/python3 - "$scratch/r.xml" "$((2 * n_ids))" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
assert len(cases) == int(sys.argv[2]), len(cases)
assert not root.findall(".//failure"), "failures present"
PY
ok "no secret value in stdout, stderr or reports" bash -c "! grep -rq '$secret' '$scratch/out' '$scratch/err' '$scratch/r.json' '$scratch/r.xml'"
assert_no_leftovers "after check"

echo "raw-network override"
set +e
OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=1 "$KBOUND" check --kernel python3 --json "$scratch/raw.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "override run exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "network is not_claimed" [ "$(check_status "$scratch/raw.json" python3 boundary.network)" = "not_claimed" ]
ok "other boundaries still ran" [ "$(check_status "$scratch/raw.json" python3 boundary.credentials)" = "pass" ]
ok "JSON says no full boundary" [ "$(json_get "$scratch/raw.json" "d['claims']['full_boundary']")" = "False" ]
ok "summary says NOT claimed" grep -q "NOT claimed" "$scratch/out"
ok "summary never says full boundary" bash -c "! grep -qi 'full boundary held' '$scratch/out'"
set +e
"$KBOUND" check --kernel python3 --allow-raw-network --require-full-boundary >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "override with --require-full-boundary is a hard failure" [ "$rc" -eq 1 ]
assert_no_leftovers "after override runs"
finish
