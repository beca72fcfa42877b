#!/usr/bin/env bash
# xeus-python (Debian's xpython) on the host, a third-party kernel nobody wrote kbound for: the
# host's own checks hold; what it fails is a property of the kernel, each with its reason; under
# kbound's default socket filter it cannot start at all (its debugger looks for a TCP port on
# 127.0.0.1 at start-up and aborts when IP sockets are refused). docs/kernels.md has the table.
source "$(dirname "$0")/lib.sh"
require bwrap xpython /usr/bin/python3

for k in xpython xpython-raw; do
  ok "the $k kernelspec is installed (scripts/setup: apt-get install xpython)" \
    test -s "/usr/share/jupyter/kernels/$k/kernel.json"
done

echo "check xpython and xpython-raw with IP sockets allowed inside the sandbox"
set +e
"$KBOUND" check --quiet --kernel xpython --kernel xpython-raw --sockets inet --json "$scratch/x.json" \
  >"$scratch/x.out" 2>"$scratch/x.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || sed 's/^/    | /' "$scratch/x.out" "$scratch/x.err" | head -60 >&2
ok "exit 1: both started and were checked, and checks failed (rc=$rc)" [ "$rc" -eq 1 ]
ok "the report names xeus-python as the implementation" [ "$(json_get "$scratch/x.json" \
  "' '.join(sorted(set(k['kernel_info']['implementation'] for k in d['kernels'])))")" = xeus-python ]
for k in xpython xpython-raw; do
  # boundary.descriptors is not in the list: xeus-python holds TCP sockets that are not yet bound
  # at times, which /proc/net/tcp does not show, and the host then cannot place them in the
  # sandbox's network namespace (a fail that is kbound's limit, not the kernel's: docs/kernels.md).
  for id in sandbox.backend sandbox.privileges sandbox.session identity.pidfd boundary.sockets; do
    ok "$k: $id passes (the host's own look)" [ "$(json_get "$scratch/x.json" \
      "next(c['status'] for k in d['kernels'] if k['name']=='$k' for c in k['checks'] if c['id']=='$id')")" = pass ]
  done
  ok "$k: every check that did not pass says why" [ "$(json_get "$scratch/x.json" \
    "all(c['detail'].strip() for k in d['kernels'] if k['name']=='$k' for c in k['checks'] if c['status']!='pass')")" = True ]
done
# Everything started, so no check is "could not be checked".
ok "no kernel is reported as not started" bash -c "! grep -q 'could not be checked' '$scratch/x.out'"
sed -n '/^kernel xpython/,$p' "$scratch/x.out" | grep -E '^(FAIL|UNSUPPORTED|UNTESTED|NOT)' | sed 's/^/    /' || true
assert_no_leftovers "after the xpython check"

echo "check xpython under the default filter (IP sockets refused)"
set +e
"$KBOUND" check --quiet --kernel xpython --json "$scratch/d.json" >"$scratch/d.out" 2>"$scratch/d.err"
rc=$?
set -e
ok "exit 3: it cannot start in kbound's default sandbox (rc=$rc)" [ "$rc" -eq 3 ]
detail=$(json_get "$scratch/d.json" "next(c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='sandbox.backend')")
# (Killed by signal 6, or "exited" when it aborted before kbound pinned it: timing.)
ok "sandbox.backend fails with the kernel's own last words, a libzmq exception ($detail)" \
  grep -qF 'what():' <<<"$detail"
assert_no_leftovers "after the default-filter check"

finish
