#!/usr/bin/env bash
# The benchmark tooling runs (docs/performance.md): the wire pair, the jupyter_client reference
# harness on one kernel, and scripts/bench's JSON. No timing is asserted: numbers come only from
# scripts/bench on a quiet machine.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3
: "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}"
cell="$KBOUND_SOURCE_DIR/kernels/python/lib.py" # the bulk of every python cell

echo "wire throughput pair"
"$KBOUND_BUILD_DIR/wire_bench" 300 "$cell" >"$scratch/wire.json"
ok "wire_bench moved 300 messages, none refused" \
  [ "$(json_get "$scratch/wire.json" "(d['messages'], d['failed'], d['msgs_per_sec'] > 0)")" = "(300, 0, True)" ]
/usr/bin/python3 "$KBOUND_SOURCE_DIR/bench/wire_session.py" 300 "$cell" >"$scratch/session.json"
ok "wire_session moved 300 messages, none refused" \
  [ "$(json_get "$scratch/session.json" "(d['messages'], d['failed'], d['msgs_per_sec'] > 0)")" = "(300, 0, True)" ]
ok "both sides carried the same execute_request" \
  [ "$(json_get "$scratch/wire.json" "abs(d['content_bytes'] - $(json_get "$scratch/session.json" "d['content_bytes']")) <= 2")" = "True" ]

echo "reference harness (jupyter_client, same bwrap argv and cells)"
set +e
libkbound_python "$KBOUND_SOURCE_DIR/bench/reference_check.py" --kernel python3 \
  --kernels-dir "$KBOUND_SOURCE_DIR/kernels" --libkbound "$KBOUND_BUILD_DIR/libkbound.so" \
  --syscall-probe "$KBOUND_BUILD_DIR/kbound-syscall-probe" --boundary-probe "$KBOUND_BUILD_DIR/kbound-probe" \
  >"$scratch/ref.json" 2>"$scratch/ref.err"
rc=$?
set -e
ok "the reference passes python3 (exit 0)" [ "$rc" -eq 0 ]
ok "it ran all 12 checks, sandbox.attack_surface among them" \
  [ "$(json_get "$scratch/ref.json" "(len(d['kernels'][0]['checks']), d['kernels'][0]['checks']['sandbox.attack_surface']['status'])")" = "(12, True)" ]
ok "it measured start-up and both interrupts" \
  [ "$(json_get "$scratch/ref.json" "all(d['kernels'][0].get(k) is not None for k in ('startup_ms', 'latency_control_ms', 'latency_pidfd_ms'))")" = "True" ]
assert_no_leftovers "reference harness"

echo "scripts/bench writes its JSON"
"$KBOUND_SOURCE_DIR/scripts/bench" --quick --only wire --build "$KBOUND_BUILD_DIR" --out "$scratch/bench.json" \
  >"$scratch/bench.out" 2>"$scratch/bench.err"
ok "the table names the wire target" grep -q "wire >= 10 x Session" "$scratch/bench.out"
ok "the JSON has machine, versions and a judged wire target" \
  [ "$(json_get "$scratch/bench.json" "(d['machine']['nproc'] > 0, d['versions']['kbound'] is not None, [t['result'] in ('PASS', 'MISS') for t in d['targets']])")" = "(True, True, [True])" ]
finish
