#!/usr/bin/env bash
# Leaky sandboxes must fail: each leak (a wrapper passed as --bwrap) makes exactly the check that
# covers it fail with exit 1 and evidence, never a pass.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

# A daemon secret in kbound's environment; LEAK=secret hands it to the sandbox.
token="kbound-leak-token-$RANDOM$RANDOM$RANDOM"

# leak NAME CHECK_ID [KERNEL]: run a check through the leaky wrapper and expect CHECK_ID to fail.
leak() {
  local name=$1 id=$2 kernel=${3:-python3} wrapper
  wrapper=$(leaky_bwrap "$name" "$token")
  set +e
  KBOUND_TEST_DAEMON_TOKEN="$token" "$KBOUND" check --quiet --kernel "$kernel" --bwrap "$wrapper" \
    --json "$scratch/$name.json" >"$scratch/$name.out" 2>"$scratch/$name.err"
  local rc=$?
  set -e
  ok "LEAK=$name exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
  [ "$rc" -eq 1 ] || tail -5 "$scratch/$name.err"
  ok "LEAK=$name fails $id" [ "$(check_status "$scratch/$name.json" "$kernel" "$id")" = "fail" ]
  ok "LEAK=$name verdict fail" [ "$(json_get "$scratch/$name.json" "d['verdict']")" = "fail" ]
  ok "LEAK=$name stdout names the failing check" grep -q "^FAIL .*$id" "$scratch/$name.out"
  ok "LEAK=$name: the token never reaches a report" bash -c "! grep -rqs '$token' '$scratch/$name.out' '$scratch/$name.err' '$scratch/$name.json'"
}

leak network boundary.network
leak write boundary.write_outside
leak secret boundary.credentials
leak credfile boundary.credentials
leak team boundary.cross_team
leak pidns identity.pid2
leak network boundary.network ir
# /proc's host-global entries left writable (bwrap's own cover is skipped when its access(W_OK)
# test fails): the host's view of the mounts must catch it, whatever a cell manages to open.
leak procsys boundary.write_outside
leak procsys boundary.write_outside ir
ok "LEAK=procsys: the evidence names /proc/sys" \
  grep -q '/proc/sys (the host' "$scratch/procsys.json"
assert_no_leftovers "after leaky sandboxes"
finish
