#!/usr/bin/env bash
# kbound cancelled mid-check (SIGTERM, SIGINT): it stops the kernels, removes its folders, writes
# the partial report it has (marked incomplete) and exits non-zero. Also: a run whose kernel is
# killed from outside ends at once with a specific error, not at the deadline.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R

for sig in TERM INT; do
  rm -f "$scratch/p.json"
  "$KBOUND" check --json "$scratch/p.json" >"$scratch/out" 2>"$scratch/err" &
  pid=$!
  # Wait until a kernel is really running (its bwrap mentions our runtime dir), then signal.
  for _ in $(seq 1 100); do
    pgrep -f "$KBOUND_RUNTIME_DIR.*ipykernel_launcher" >/dev/null && break
    sleep 0.1
  done
  sleep 1
  kill -s "$sig" "$pid"
  set +e
  start=$(date +%s%N)
  wait "$pid"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  set -e
  ok "SIG$sig: exits non-zero (rc=$rc)" [ "$rc" -ne 0 ]
  ok "SIG$sig: stopped within the 5 s teardown bound (${elapsed_ms} ms)" [ "$elapsed_ms" -lt 5000 ]
  ok "SIG$sig: partial report written" [ -s "$scratch/p.json" ]
  ok "SIG$sig: report marked incomplete" [ "$(json_get "$scratch/p.json" "d['complete']")" = "False" ]
  ok "SIG$sig: verdict fail" [ "$(json_get "$scratch/p.json" "d['verdict']")" = "fail" ]
  ok "SIG$sig: summary says why" grep -q "incomplete" "$scratch/out"
  assert_no_leftovers "after SIG$sig"
done

echo "a signal at kbound's very start (pending when it is executed; check then re-executes itself)"
# The earliest a signal can reach kbound's own code: sent, blocked, before the exec. kbound's main
# installs its handlers before anything is created and then unblocks it; check carries it across
# its re-exec (where the default action would kill it with nothing said).
cat >"$scratch/pending.py" <<'PY'
import os, signal, sys
sig = getattr(signal, sys.argv[1])
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
os.kill(os.getpid(), sig)
os.execv(sys.argv[2], sys.argv[2:])
PY
for sig in INT TERM; do
  for cmd in check conformance; do
    rm -f "$scratch/early.json"
    set +e
    /usr/bin/python3 "$scratch/pending.py" "SIG$sig" "$KBOUND" "$cmd" --kernel python3 --json "$scratch/early.json" \
      >"$scratch/early.out" 2>"$scratch/early.err"
    rc=$?
    set -e
    ok "$cmd, SIG$sig at the start: exit 1, not killed by it (rc=$rc)" [ "$rc" -eq 1 ]
    ok "  ... a report written" [ -s "$scratch/early.json" ]
    ok "  ... marked incomplete by the signal" \
      [ "$(json_get "$scratch/early.json" "(d['complete'], d['incomplete_reason'])")" = "(False, 'interrupted by signal $(kill -l "$sig")')" ]
    ok "  ... verdict fail" [ "$(json_get "$scratch/early.json" "d['verdict']")" = fail ]
    assert_no_leftovers "after $cmd with SIG$sig at the start"
  done
  set +e
  /usr/bin/python3 "$scratch/pending.py" "SIG$sig" "$KBOUND" run --kernel python3 'print(1)' >"$scratch/early.out" 2>"$scratch/early.err"
  rc=$?
  set -e
  ok "run, SIG$sig at the start: exit 1, not killed by it (rc=$rc)" [ "$rc" -eq 1 ]
  ok "  ... says it was cancelled" grep -q "cancelled" "$scratch/early.err"
  assert_no_leftovers "after run with SIG$sig at the start"
done

echo "kbound itself killed with SIGKILL (nothing of it runs): no sandbox process survives it"
# A home of its own: the canary check plants there stays after a SIGKILL (test_keylife shows the
# next run removing it) and must not pile up in the real one.
mkdir -m 700 "$scratch/home"
HOME="$scratch/home" "$KBOUND" check --quiet >"$scratch/out" 2>"$scratch/err" &
pid=$!
for _ in $(seq 1 100); do
  pgrep -f "$KBOUND_RUNTIME_DIR.*ipykernel_launcher" >/dev/null && break
  sleep 0.1
done
ok "SIGKILL: a sandboxed kernel was running" pgrep -f "$KBOUND_RUNTIME_DIR.*ipykernel_launcher"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
gone=no
for _ in $(seq 1 50); do
  pgrep -f "$KBOUND_RUNTIME_DIR" >/dev/null || { gone=yes; break; }
  sleep 0.1
done
ok "SIGKILL: every process of the sandboxes died with kbound" [ "$gone" = yes ]
[ "$gone" = yes ] || pgrep -af "$KBOUND_RUNTIME_DIR" >&2
# A SIGKILLed run cannot remove its own folders; they are not this test's subject.
rm -rf "$KBOUND_RUNTIME_DIR"/kbound-*

echo "kernel killed from outside during a cell"
"$KBOUND" run --kernel python3 --timeout 60 --team killed \
  'import time; open("/workspace/started", "w").close(); time.sleep(50)' >"$scratch/out" 2>"$scratch/err" &
pid=$!
# Our kernel only: other tests may be running python3 kernels with the same command line, so go
# from our bwrap (its argv names our runtime dir) to its init and then to the kernel, PID 2.
kpid=""
for _ in $(seq 1 100); do
  bw=$(pgrep -f "^/usr/bin/bwrap .*$KBOUND_RUNTIME_DIR" | head -1 || true)
  init=${bw:+$(pgrep -P "$bw" | head -1 || true)}
  kpid=${init:+$(pgrep -P "$init" | head -1 || true)}
  [ -n "$kpid" ] && grep -q 'NSpid:.*[[:space:]]2$' "/proc/$kpid/status" 2>/dev/null && break
  kpid=""
  sleep 0.1
done
ok "found our kernel's host pid" [ -n "$kpid" ]
# Kill it once the cell runs (its file is in the sandbox's workspace, a tmpfs the host sees
# through the kernel's root), not during start-up, which takes longer than any fixed pause on a
# loaded machine.
for _ in $(seq 1 300); do
  [ -e "/proc/$kpid/root/workspace/started" ] && break
  sleep 0.1
done
ok "the cell started" [ -e "/proc/$kpid/root/workspace/started" ]
start=$(date +%s%N)
[ -n "$kpid" ] && kill -KILL "$kpid"
set +e
wait "$pid"
rc=$?
set -e
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
ok "a killed kernel ends the run with exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
ok "noticed through the pidfd (${elapsed_ms} ms), not at the 60 s deadline" [ "$elapsed_ms" -lt 30000 ]
ok "the error says the kernel died" grep -q "died" "$scratch/err" || { cat "$scratch/err" >&2; false; }
assert_no_leftovers "after the killed kernel"
finish
