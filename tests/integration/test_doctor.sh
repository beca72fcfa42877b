#!/usr/bin/env bash
# Fail closed: without a usable bwrap every command that needs it exits 3 with a diagnosis.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

"$KBOUND" doctor >"$scratch/out"
ok "doctor passes here" grep -q "can enforce" "$scratch/out"
ok "doctor names bwrap's version" grep -q "bwrap" "$scratch/out"

expect_exit() { # expect_exit CODE LABEL PATTERN -- COMMAND...
  local code=$1 label=$2 pattern=$3
  shift 4
  set +e
  "$@" >"$scratch/o" 2>"$scratch/e"
  local rc=$?
  set -e
  ok "$label exits $code (rc=$rc)" [ "$rc" -eq "$code" ]
  ok "$label says why" grep -qiE "$pattern" <(unwrapped "$scratch/o" "$scratch/e")
}

expect_exit 3 "doctor with a missing bwrap" "not found" -- "$KBOUND" doctor --bwrap /nonexistent/bwrap
expect_exit 3 "check with a missing bwrap" "bubblewrap" -- "$KBOUND" check --bwrap /nonexistent/bwrap
expect_exit 3 "run with a missing bwrap" "bubblewrap" -- "$KBOUND" run --kernel python3 --bwrap /nonexistent/bwrap 'print(1)'
expect_exit 3 "check with no bwrap in PATH" "install" -- /usr/bin/env PATH=/nonexistent "$KBOUND" check

# A bwrap that refuses like Ubuntu 24.04's AppArmor does for unprivileged user namespaces.
cat >"$scratch/refusing-bwrap" <<'SH'
#!/bin/sh
[ "$1" = "--version" ] && { echo "bubblewrap 0.8.0"; exit 0; }
[ "$1" = "--help" ] && exec /usr/bin/bwrap --help
echo "bwrap: setting up uid map: Permission denied" >&2
exit 1
SH
chmod +x "$scratch/refusing-bwrap"
expect_exit 3 "check when bwrap is refused" "uid map|user namespace" -- "$KBOUND" check --kernel python3 --bwrap "$scratch/refusing-bwrap"
expect_exit 3 "run when bwrap is refused" "uid map|user namespace" -- "$KBOUND" run --kernel python3 --bwrap "$scratch/refusing-bwrap" 'print(1)'
expect_exit 3 "doctor when bwrap is refused" "uid map|user namespace" -- "$KBOUND" doctor --bwrap "$scratch/refusing-bwrap"

# A set-uid bwrap builds the sandbox as root: refused, and said so (the bit is what counts; a
# script carrying it runs as its caller, so this stand-in needs no privilege).
cat >"$scratch/setuid-bwrap" <<'SH'
#!/bin/sh
[ "$1" = "--version" ] && { echo "bubblewrap 0.8.0"; exit 0; }
[ "$1" = "--help" ] && exec /usr/bin/bwrap --help
exit 1
SH
chmod 4755 "$scratch/setuid-bwrap"
expect_exit 3 "doctor with a set-uid bwrap" "set-uid root, which kbound does not support" -- \
  "$KBOUND" doctor --bwrap "$scratch/setuid-bwrap"
expect_exit 3 "check with a set-uid bwrap" "set-uid root, which kbound does not support" -- \
  "$KBOUND" check --kernel python3 --bwrap "$scratch/setuid-bwrap"

# No pack is not an unenforceable sandbox: the host's checks run, the cell-driven ones are untested.
expect_exit 1 "check with no probe set for the language" "add a pack, a folder python/ with kbound.json" -- \
  env KBOUND_KERNELS_DIR="$scratch" "$KBOUND" check --kernel python3
expect_exit 2 "check with a bad option" "unknown option .--bogus." -- "$KBOUND" check --bogus
expect_exit 2 "OPENAI4S_KERNEL_SANDBOX=off is refused" "enforce" -- env OPENAI4S_KERNEL_SANDBOX=off "$KBOUND" check
assert_no_leftovers "after refused runs"
finish
