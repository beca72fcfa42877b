#!/usr/bin/env bash
# Leaky sandboxes must fail: each leak (a wrapper passed as --bwrap) makes exactly the check that
# covers it fail with exit 1 and evidence, never a pass.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

leaky="$KBOUND_SOURCE_DIR/tests/fixtures/leaky-bwrap"

# leak NAME CHECK_ID [KERNEL]: run a check through the leaky wrapper and expect CHECK_ID to fail.
leak() {
  local name=$1 id=$2 kernel=${3:-python3}
  set +e
  LEAK=$name "$KBOUND" check --quiet --kernel "$kernel" --bwrap "$leaky" --json "$scratch/$name.json" \
    >"$scratch/$name.out" 2>"$scratch/$name.err"
  local rc=$?
  set -e
  ok "LEAK=$name exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
  ok "LEAK=$name fails $id" [ "$(check_status "$scratch/$name.json" "$kernel" "$id")" = "fail" ]
  ok "LEAK=$name verdict fail" [ "$(json_get "$scratch/$name.json" "d['verdict']")" = "fail" ]
  ok "LEAK=$name stdout names the failing check" grep -q "^FAIL .*$id" "$scratch/$name.out"
}

leak network boundary.network
leak write boundary.write_outside
leak secret boundary.credentials
leak credfile boundary.credentials
leak team boundary.cross_team
leak pidns identity.pid2
leak network boundary.network ir
assert_no_leftovers "after leaky sandboxes"
finish
