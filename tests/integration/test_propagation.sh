#!/usr/bin/env bash
# The sandbox receives no mount event of the host's: bwrap leaves its mounts slaves of the host's
# peer groups, so on a host whose / is shared (systemd's default) a folder mounted writable under
# /usr after the sandbox started would appear inside it. kbound makes the sandbox's tree private
# before the kernel's program runs. Shown in a mount namespace of the test's own whose / is shared
# (unshare --propagation shared: a host like systemd's, and nothing outside the test changes), with
# a tmpfs mounted over /usr/local/share while a cell runs; as root and as an ordinary user.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 unshare mount runuser

if [ "$(id -u)" -ne 0 ]; then
  echo "FATAL: this test makes a mount namespace of its own with a shared /, which needs root" >&2
  exit 1
fi
user=$(test_user)
chmod 1777 "$KBOUND_RUNTIME_DIR"
cell='import os, time
time.sleep(3)
seen = sum("kbt-propagation" in l for l in open("/proc/self/mountinfo"))
try:
    open("/usr/local/share/kbt-propagation-write", "w").write("x")
    wrote = True
except OSError:
    wrote = False
print("mounts", seen, "wrote", wrote)'

# in_shared_host RUNNER...: runs RUNNER kbound run CELL in a new mount namespace whose / is shared,
# mounting a writable tmpfs over /usr/local/share there once the kernel runs: as soon as a python
# process descended from this shell runs ipykernel (the kernel itself, not bwrap, whose argv names it), so after the sandbox
# started however long its start took (a fixed 1.5 s came before it under the suite's load).
in_shared_host() {
  unshare -m --propagation shared -- bash -c '
    top=$$
    mine() { local q=$1; while [ "$q" -gt 1 ]; do [ "$q" = "$top" ] && return 0; q=$(awk "{print \$4}" "/proc/$q/stat" 2>/dev/null || echo 1); done; return 1; }
    (for _ in $(seq 600); do
       for p in $(pgrep -f "^/usr/bin/python3 -m ipykernel_launcher"); do
         mine "$p" && { echo "the mount came while the kernel ran" >&2; break 2; }
       done
       sleep 0.05
     done
     mount -t tmpfs -o size=1m kbt-propagation /usr/local/share) &
    "$@"
    status=$?
    wait
    grep -q " /usr/local/share .* - tmpfs kbt-propagation " /proc/self/mountinfo && echo "the host had the mount" >&2
    exit $status' bash "$@"
}

out=$(in_shared_host "$KBOUND" run --kernel python3 "$cell" 2>"$scratch/root.err")
ok "root: the host's later mount never appeared in the sandbox, nor let a write through (got '$out')" \
  [ "$out" = "mounts 0 wrote False" ]
ok "root: the test's host made the mount meanwhile" grep -qx "the host had the mount" "$scratch/root.err"
ok "root: ... while the kernel ran" grep -qx "the mount came while the kernel ran" "$scratch/root.err"

out=$(in_shared_host runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 \
  KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$(user_kbound)" run --kernel python3 "$cell" 2>"$scratch/user.err")
ok "$user: the host's later mount never appeared in the sandbox, nor let a write through (got '$out')" \
  [ "$out" = "mounts 0 wrote False" ]
ok "$user: the test's host made the mount meanwhile" grep -qx "the host had the mount" "$scratch/user.err"
ok "$user: ... while the kernel ran" grep -qx "the mount came while the kernel ran" "$scratch/user.err"

# The same with the whole check: it passes, and the mount made during it reached nothing.
set +e
in_shared_host "$KBOUND" check --kernel python3 --json "$scratch/check.json" >"$scratch/check.out" 2>"$scratch/check.err"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -20 "$scratch/check.err"; }
ok "root: check passes on a host whose / is shared, with a mount made during it (rc=$rc)" [ "$rc" -eq 0 ]
ok "root: the test's host made the mount during the check" grep -qx "the host had the mount" "$scratch/check.err"
ok "root: ... while the kernel ran" grep -qx "the mount came while the kernel ran" "$scratch/check.err"
assert_no_leftovers "after the shared hosts"
finish
