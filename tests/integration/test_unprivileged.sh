#!/usr/bin/env bash
# CI runners are usually not root: install kbound to a prefix and run the full check as an
# ordinary user (user namespaces through bwrap), as a new user would.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R runuser useradd

: "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}"
user=$(test_user)
if [ "$(id -u)" -eq 0 ]; then
  as_user() { runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$user" LANG=C.UTF-8 "$@"; }
else
  as_user() { env "$@"; }
fi

prefix="$scratch/prefix"
cmake --install "$KBOUND_BUILD_DIR" --prefix "$prefix" >/dev/null
chmod -R a+rX "$scratch"
chmod 1777 "$KBOUND_RUNTIME_DIR"
mkdir -m 1777 "$scratch/reports"

echo "as $user: kbound doctor"
set +e
as_user KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$prefix/bin/kbound" doctor >"$scratch/doctor.out" 2>&1
rc=$?
set -e
cat "$scratch/doctor.out"
ok "doctor passes unprivileged (rc=$rc)" [ "$rc" -eq 0 ]

echo "as $user: kbound run"
out=$(as_user KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$prefix/bin/kbound" run --kernel python3 'import os; print(os.getpid(), os.getuid())')
ok "python3 is PID 2 unprivileged (got '$out')" [ "${out%% *}" = "2" ]

echo "as $user: kbound check"
set +e
as_user KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$prefix/bin/kbound" check --json "$scratch/reports/u.json" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
cat "$scratch/out"
[ "$rc" -eq 0 ] || tail -20 "$scratch/err"
ok "check passes unprivileged (rc=$rc)" [ "$rc" -eq 0 ]
uid=$(id -u "$user")
ok "the test user $user is not root ($uid)" [ "$uid" -ne 0 ]
ok "the report says it ran unprivileged, as $user" [ "$(json_get "$scratch/reports/u.json" "d['sandbox']['uid']")" = "$uid" ]
ok "the kernels ran as $user ($uid), not root" [ "$(json_get "$scratch/reports/u.json" "sorted(set(k['process']['uid'] for k in d['kernels']))")" = "[$uid]" ]
ok "the installed probe cells were used" [ "$(json_get "$scratch/reports/u.json" "d['verdict']")" = "pass" ]
ok "the host saw every sandbox process run as $user ($uid)" \
  [ "$(json_get "$scratch/reports/u.json" "sorted({u for k in d['kernels'] for c in k['checks'] if c['id']=='sandbox.privileges' for s in c['evidence']['snapshots'] for p in s['processes'] for u in p['uid']})")" = "[$uid]" ]

echo "as $user: kbound conformance (installed language packs)"
set +e
as_user KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$prefix/bin/kbound" conformance --quiet --kernel python3 \
  --json "$scratch/reports/c.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$scratch/out"; tail -20 "$scratch/err"; }
ok "conformance passes unprivileged (rc=$rc)" [ "$rc" -eq 0 ]
ok "no item untested: the installed packs carry the snippets" \
  [ "$(json_get "$scratch/reports/c.json" "sum(c['status'] == 'untested' for k in d['kernels'] for c in k['checks'])")" = 0 ]
assert_no_leftovers "after unprivileged runs"
finish
