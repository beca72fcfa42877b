#!/usr/bin/env bash
# kbound-syscall-probe in real bwrap: installed where cmake --install puts it, run in a sandbox whose
# root holds nothing but the program (so it needs no library of the host), under `bwrap --seccomp`
# with kbound's filter for each socket mode (every entry answers the filter's errno, every family
# is tried), and without a filter, the negative control (the calls reach the kernel, no family is
# tried). The filter and the table come from libkbound itself (seccomp_probe.py).
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 cmake ldd
: "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}"

lib="$KBOUND_BUILD_DIR/libkbound.so"
ok "libkbound.so is built ($lib)" test -f "$lib"
helper() {
  libkbound_python "$KBOUND_SOURCE_DIR/tests/integration/seccomp_probe.py" "$@"
}

echo "install"
prefix="$scratch/prefix"
cmake --install "$KBOUND_BUILD_DIR" --prefix "$prefix" >"$scratch/install.log" 2>&1 || cat "$scratch/install.log"
probe="$prefix/libexec/kbound/kbound-syscall-probe"
ok "installed to libexec/kbound/kbound-syscall-probe" test -x "$probe"
ok "the installed program is the built one" cmp -s "$probe" "$KBOUND_BUILD_DIR/kbound-syscall-probe"
# A world-readable copy, so the sandbox user can run it when the tests run as root from a private
# checkout.
cp "$probe" "$scratch/kbound-syscall-probe"
chmod 755 "$scratch/kbound-syscall-probe"
probe="$scratch/kbound-syscall-probe"

# sandbox [bwrap options...]: the probe alone in an empty root, its JSON on stdout.
sandbox() {
  bwrap --ro-bind "$probe" /kbound-syscall-probe --proc /proc --dev /dev --unshare-all --die-with-parent \
    --new-session --cap-drop ALL "$@" /kbound-syscall-probe
}

echo "without a filter (the negative control)"
set +e
sandbox >"$scratch/unfiltered.json" 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 0 ] || cat "$scratch/err"
ok "it runs with nothing of the host in its root, and exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "the calls reach the kernel; no family is tried" \
  helper check "$lib" default unfiltered "$scratch/unfiltered.json"

for sockets in default unix inet; do
  echo "under kbound's filter (sockets $sockets)"
  set +e
  helper run "$lib" "$sockets" -- bwrap --ro-bind "$probe" /kbound-syscall-probe --proc /proc \
    --dev /dev --unshare-all --die-with-parent --new-session --cap-drop ALL --seccomp '{fd}' \
    /kbound-syscall-probe >"$scratch/filtered-$sockets.json" 2>"$scratch/err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || cat "$scratch/err"
  ok "it exits 0 under the filter (rc=$rc)" [ "$rc" -eq 0 ]
  ok "every entry answers the filter's errno; every family is tried" \
    helper check "$lib" "$sockets" filtered "$scratch/filtered-$sockets.json"
done

echo "usage"
ok "--help exits 0" "$probe" --help
set +e
"$probe" extra >/dev/null 2>&1
rc=$?
set -e
ok "an argument is a usage error (rc=$rc)" [ "$rc" -eq 2 ]

finish
