#!/usr/bin/env bash
# A new user's first run from a folder nobody else may enter (a clone in root's 0700 home, or an
# ordinary user's): nothing the sandbox needs depends on the sandbox user reaching it. kbound's
# syscall probe is handed in as a copy in the run's own folders, from the build-tree layout and
# from an installed prefix alike; as root (the sandbox then runs as kbound-sandbox) and as an
# ordinary user. What still cannot be reached (a --ro-bind folder in there) is refused before any
# kernel starts, naming the folder and the fix.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R runuser cmake install

: "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}"
user=$(test_user)
chmod 1777 "$KBOUND_RUNTIME_DIR"

# check_from LABEL DIR RUNNER... -- KBOUND_ARGS...: runs check from DIR's layout and asserts a pass.
check_from() {
  local label=$1 rc
  shift
  set +e
  "$@" >"$scratch/out" 2>"$scratch/err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || { cat "$scratch/out"; tail -20 "$scratch/err"; }
  ok "$label: check passes python3 and ir (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$label: every result PASS or the documented UNSUPPORTED" \
    [ -z "$(grep -E '^(FAIL|UNTESTED|NOT_CLAIMED)' "$scratch/out")" ]
  ok "$label: no bind failed" not grep -q "Can't find source path" "$scratch/out" "$scratch/err"
}

if [ "$(id -u)" -eq 0 ]; then
  # Root's clone: the build tree's probe and an installed prefix, both in a root-owned 0700 folder.
  home=$scratch/root-home
  install -d -m 700 "$home" "$home/build"
  cp "$KBOUND_BUILD_DIR/kbound-syscall-probe" "$home/build/"
  ok "the sandbox user cannot enter the folder" not runuser -u "$(sandbox_user)" -- test -x "$home/build"
  check_from "root, the probe of a build tree in a 0700 folder" \
    env KBOUND_SYSCALL_PROBE="$home/build/kbound-syscall-probe" "$KBOUND" check
  cmake --install "$KBOUND_BUILD_DIR" --prefix "$home/prefix" >/dev/null
  check_from "root, a prefix installed in a 0700 folder" "$home/prefix/bin/kbound" check
  assert_no_leftovers "after root's runs from a 0700 folder"

  # An --ro-bind folder in there cannot be reached: refused before anything starts, naming it.
  install -d -m 755 "$home/venv"
  set +e
  "$KBOUND" check --kernel python3 --ro-bind "$home/venv" >"$scratch/out" 2>"$scratch/err"
  rc=$?
  set -e
  ok "an --ro-bind folder in the 0700 folder: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
  ok "  ... naming the folder that stops the sandbox user, and the fix" \
    grep -qF -- "--ro-bind $home/venv: the sandbox user $(sandbox_user) cannot reach it ($home stops it)" "$scratch/err"
  ok "  ... before any kernel started" not grep -q "starting in bubblewrap" "$scratch/err"
fi

# An ordinary user's 0700 folder: the same two layouts, run as that user.
uhome=$scratch/user-home
install -d -m 700 "$uhome" "$uhome/build"
cp "$KBOUND_BUILD_DIR/kbound-syscall-probe" "$uhome/build/"
cmake --install "$KBOUND_BUILD_DIR" --prefix "$uhome/prefix" >/dev/null
as_user() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  chown -R "$user:" "$uhome"
  as_user() { runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 \
    KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$@"; }
fi
check_from "$user, the probe of a build tree in a 0700 folder" \
  as_user env KBOUND_SYSCALL_PROBE="$uhome/build/kbound-syscall-probe" "$(user_kbound)" check
check_from "$user, a prefix installed in a 0700 folder" as_user "$uhome/prefix/bin/kbound" check
assert_no_leftovers "after $user's runs from a 0700 folder"
finish
