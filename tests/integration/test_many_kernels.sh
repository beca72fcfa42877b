#!/usr/bin/env bash
# Eight python3 kernels in one check, three times over: on a small machine under load every check
# still passes, lifecycle.shutdown included (issue 39: one run in three failed it with "still
# running 15000 ms later"; past 15 s the check now sends the SIGTERM a kernel manager sends and a
# kernel that then goes passes late, docs/faults.md and docs/kernels.md). What each kernel's exit
# took is printed, and
# a late exit's evidence (what the kernel's threads and children were doing 15 s after its reply)
# with it, so a slow one can be traced from the test's log.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

kernels=()
for _ in 1 2 3 4 5 6 7 8; do kernels+=(--kernel python3); done
for round in 1 2 3; do
  echo "round $round: eight python3 kernels (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  set +e
  "$KBOUND" check "${kernels[@]}" --json "$scratch/eight-$round.json" >"$scratch/eight.out" 2>"$scratch/eight.err"
  rc=$?
  set -e
  ok "round $round: check passes (rc=$rc)" [ "$rc" -eq 0 ]
  [ "$rc" -eq 0 ] || { tail -25 "$scratch/eight.out"; tail -15 "$scratch/eight.err"; }
  json_read n "$scratch/eight-$round.json" "len(d['kernels'])"
  ok "round $round: eight kernels in the report ($n)" [ "$n" = 8 ]
  json_read shutdowns "$scratch/eight-$round.json" \
    "sorted(set(c['status'] for k in d['kernels'] for c in k['checks'] if c['id'] == 'lifecycle.shutdown'))"
  ok "round $round: lifecycle.shutdown passes for every kernel ($shutdowns)" [ "$shutdowns" = "['pass']" ]
  # The trace: each kernel's shutdown, and what held a late one.
  /usr/bin/python3 - "$scratch/eight-$round.json" <<'PY'
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    c = next(c for c in k["checks"] if c["id"] == "lifecycle.shutdown")
    print("   %s %s: %s" % (k["team"], c["status"], c["detail"][:240]))
    held = c.get("evidence", {}).get("still_running")
    if held:
        print("     still running %s ms after its reply: children %s; threads %s" % (
            held.get("after_ms"), held.get("children"),
            [(t.get("comm"), t.get("state"), t.get("wchan")) for t in held.get("threads", [])]))
PY
  assert_no_leftovers "after round $round"
done
finish
