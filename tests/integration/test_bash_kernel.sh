#!/usr/bin/env bash
# A kernel that is neither ipykernel nor IRkernel: a bash kernel built the way bash kernels are
# (tests/fixtures/bash-kernel: metakernel driving one bash through a pty). The bash pack
# (kernels/bash) returns results on stdout; every check must be judged, and pass, on it: its
# shell's terminal is a pty of the sandbox's own, its interrupted cells say "ok".
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3
if ! /usr/bin/python3 -c 'import metakernel' 2>/dev/null; then
  echo "FATAL: python3-metakernel is required by this test; run scripts/setup (apt-get install python3-metakernel)" >&2
  exit 1
fi

bashk="$fixtures/bash-kernel"
dir="$scratch/kernels/bashk"
mkdir -p "$dir"
/usr/bin/python3 - "$dir/kernel.json" "$bashk/kbound_bash_kernel.py" <<'PY'
import json, sys
json.dump({"argv": ["/usr/bin/python3", sys.argv[2], "-f", "{connection_file}"],
           "display_name": "bash (kbound fixture)", "language": "bash", "interrupt_mode": "signal"},
          open(sys.argv[1], "w"))
PY

echo "kbound check on the bash kernel"
set +e
"$KBOUND" check --kernel "$dir" --ro-bind "$bashk" --json "$scratch/bash.json" --transcript "$scratch/bash.jsonl" \
  >"$scratch/bash.out" 2>"$scratch/bash.err"
rc=$?
set -e
ok "bash: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
# (metakernel's SIGINT relay once left the long cell running in the CI's sanitizer suite: the
# messages say when the interrupt, the stream and the replies came)
[ "$rc" -eq 0 ] || { cat "$scratch/bash.out"; tail -5 "$scratch/bash.err"; print_transcript "$scratch/bash.jsonl"; }
ok "bash: every check of check's list was judged" same_checks_as_listed "$scratch/bash.json"
ok "bash: all pass" \
  [ "$(json_get "$scratch/bash.json" "sorted({c['status'] for c in d['kernels'][0]['checks']})")" = "['pass']" ]
ok "bash: the shell's terminal is named as the sandbox's own pty" \
  grep -qF "but a pty of the sandbox's own devpts" <<<"$(json_get "$scratch/bash.json" "next(c['detail'] for c in d['kernels'][0]['checks'] if c['id']=='sandbox.session')")"
ok "bash: the probe's subprocess was seen alive by the host" \
  [ "$(json_get "$scratch/bash.json" "next(c['evidence']['child_seen_by_host'] for c in d['kernels'][0]['checks'] if c['id']=='boundary.credentials')")" = True ]
ok "bash: nothing the cells printed holds a result marker of this run in the summary" \
  bash -c "! grep -q 'KBOUND-RESULT-' '$scratch/bash.out'"
assert_no_leftovers "after the bash kernel"
finish
