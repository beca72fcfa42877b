#!/usr/bin/env bash
# Debian's Octave kernel (python3-octave-kernel: metakernel driving octave-cli through a pty, its
# kernelspec starting `python`) with the octave pack (kernels/octave), which returns results on
# stdout: every check must be judged, and pass, as on python3 and ir.
source "$(dirname "$0")/lib.sh"
require bwrap
if [ ! -f /usr/share/jupyter/kernels/octave/kernel.json ] || ! command -v python >/dev/null || ! command -v octave-cli >/dev/null; then
  echo "FATAL: Debian's Octave kernel is required by this test; run scripts/setup (apt-get install octave python3-octave-kernel python-is-python3)" >&2
  exit 1
fi

echo "kbound check on Debian's octave kernelspec"
set +e
"$KBOUND" check --kernel octave --json "$scratch/octave.json" >"$scratch/octave.out" 2>"$scratch/octave.err"
rc=$?
set -e
ok "octave: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { cat "$scratch/octave.out"; tail -5 "$scratch/octave.err"; }
ok "octave: the octave pack ran (language octave, no 'no probe set')" \
  bash -c '! grep -q "no probe set" "$1"' _ "$scratch/octave.err"
ok "octave: every check of check's list was judged" same_checks_as_listed "$scratch/octave.json"
ok "octave: all pass" \
  [ "$(json_get "$scratch/octave.json" "sorted({c['status'] for c in d['kernels'][0]['checks']})")" = "['pass']" ]
ok "octave: the probe's subprocess was seen alive by the host" \
  [ "$(json_get "$scratch/octave.json" "next(c['evidence']['child_seen_by_host'] for c in d['kernels'][0]['checks'] if c['id']=='boundary.credentials')")" = True ]
ok "octave: the host saw the long cell's progress stop after the interrupt" \
  [ "$(check_status "$scratch/octave.json" octave interrupt.pidfd)" = pass ]
ok "octave: nothing the cells printed holds a result marker of this run in the summary" \
  bash -c "! grep -q 'KBOUND-RESULT-' '$scratch/octave.out'"
assert_no_leftovers "after the octave kernel"
finish
