#!/usr/bin/env bash
# A bwrap whose init takes seconds to set the sandbox up (as on a loaded machine: the suite beside
# valgrind and two compilers once took it past two seconds) still starts: kbound waits for init to
# block on --block-fd within the launch's deadline before its first look, instead of looking into
# a sandbox whose /workspace is not mounted yet and failing the launch.
source "$(dirname "$0")/lib.sh"
require bwrap mkfifo /usr/bin/python3

slow_seconds=4
# The FIFO the stand-in's bwrap reads a --file from while it sets up; it is in the runtime folder
# (755), so the sandbox user that runs bwrap when the tests are root can open it.
fifo="$KBOUND_RUNTIME_DIR/slow-setup.fifo"
mkfifo -m 666 "$fifo"
# The writer opens first (waiting for the reader), then sends its line and closes only after
# slow_seconds: until then bwrap's init is still in its set-up.
(exec 3>"$fifo"; sleep "$slow_seconds"; echo slow >&3) &
writer=$!
wrapper=$(leaky_bwrap slowsetup "$fifo")

started=$(date +%s)
set +e
"$KBOUND" run --kernel python3 --team slow --bwrap "$wrapper" 'print("kbound-slow-" + "setup-ok")' \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
took=$(($(date +%s) - started))
ok "kbound run through a slow set-up exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -20 "$scratch/err"
ok "the cell ran in that sandbox" grep -q "kbound-slow-setup-ok" "$scratch/out"
ok "the launch waited out the set-up (${took}s >= ${slow_seconds}s)" [ "$took" -ge "$slow_seconds" ]
ok "no launch failure was said" bash -c "! grep -q 'cannot open the sandbox' '$scratch/err'"
wait "$writer" || true
rm -f "$fifo"
assert_no_leftovers "after the slow set-up"
finish
