#!/usr/bin/env bash
# An honest kernel under load still passes: one that holds more descriptors than select() can
# watch (tests/fixtures/busy-kernel/many_fds.py) must not fail a check through a limit of kbound's
# own cells or of the host's inspection.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

busy="$fixtures/busy-kernel"
dir="$scratch/kernels/busy"
mkdir -p "$dir"
/usr/bin/python3 - "$dir/kernel.json" "$busy/many_fds.py" <<'PY'
import json, sys
json.dump({"argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}",
                    "--IPKernelApp.exec_files=" + sys.argv[2]],
           "display_name": "busy", "language": "python", "interrupt_mode": "signal"}, open(sys.argv[1], "w"))
PY

echo "a kernel holding 1,100 extra descriptors"
set +e
"$KBOUND" check --quiet --kernel "$dir" --ro-bind "$busy" --json "$scratch/busy.json" >"$scratch/busy.out" 2>"$scratch/busy.err"
rc=$?
set -e
ok "busy: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { cat "$scratch/busy.out"; tail -5 "$scratch/busy.err"; }
ok "busy: the host counted the descriptors" \
  [ "$(json_get "$scratch/busy.json" "next(c['evidence']['descriptors_checked'] for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.descriptors') > 1100")" = True ]
ok "busy: the credentials cell's subprocess was watched and read" \
  [ "$(json_get "$scratch/busy.json" "next(c['status'] for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.credentials')")" = pass ]
assert_no_leftovers "after the busy kernel"
finish
