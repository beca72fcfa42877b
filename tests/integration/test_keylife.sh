#!/usr/bin/env bash
# The connection key's life on disk: the connection file is removed once the kernel is ready; each
# run's base folder is locked (flock) for kbound's life; a run killed with SIGKILL leaves its folders
# (nothing can remove them then), `kbound doctor` lists them, and the next run removes them and
# says so. Folders kept with --keep, other users' folders and live runs' folders are left alone.
source "$(dirname "$0")/lib.sh"
require bwrap flock

empty_runtime() { [ -z "$(find "$KBOUND_RUNTIME_DIR" -mindepth 1 -print -quit)" ]; }

echo "the connection file is gone once the kernel is ready"
set +e
# (the file the kernel was started with, wherever kbound put it: ipykernel's own record of it)
"$KBOUND" run --kernel python3 --keep 'import os; from ipykernel.kernelapp import IPKernelApp; f = IPKernelApp.instance().connection_file; print(f.startswith("/run/kbound"), os.path.exists(f))' \
  >"$scratch/gone.out" 2>"$scratch/gone.err"
rc=$?
set -e
ok "run: exit 0 (got $rc)" [ "$rc" -eq 0 ]
ok "a cell finds no connection file to read" [ "$(cat "$scratch/gone.out")" = "True False" ]
kept=$(find "$KBOUND_RUNTIME_DIR" -mindepth 1 -maxdepth 1 -name 'kbound-*' | head -1)
ok "the kept team folder is there" [ -d "$kept/teams/run/workspace" ]
ok "... without run/kernel.json (the key is not on disk)" [ ! -e "$kept/teams/run/run/kernel.json" ]

echo "a kept folder is left alone by later runs, and doctor names it"
"$KBOUND" run --kernel python3 'print(1)' >"$scratch/after-keep.out" 2>"$scratch/after-keep.err"
ok "the next run leaves the kept folder" [ -d "$kept/teams/run/workspace" ]
ok "... and says nothing about it" bash -c "! grep -q removed '$scratch/after-keep.err'"
"$KBOUND" doctor 2>&1 | unwrapped >"$scratch/doctor-kept.out" || true
ok "doctor lists it as kept" grep -q "kept folders (--keep; remove them when done): $kept" "$scratch/doctor-kept.out"
rm -rf "$kept"

echo "SIGKILL mid-check: its folders stay; doctor lists them; the next run removes them"
# A home of its own, so the canary it plants there can be found, and is never left in the real one.
mkdir -m 700 "$scratch/home"
HOME="$scratch/home" "$KBOUND" check --quiet --kernel python3 >"$scratch/killed.out" 2>"$scratch/killed.err" &
pid=$!
# Until the kernel is up (its log exists and the connection file is gone: it was ready).
for _ in $(seq 1 300); do
  log=$(compgen -G "$KBOUND_RUNTIME_DIR/kbound-*/teams/kbound-python3/host/kernel.log" || true)
  [ -n "$log" ] && ! compgen -G "$KBOUND_RUNTIME_DIR/kbound-*/teams/kbound-python3/run/kernel.json" >/dev/null && break
  sleep 0.05
done
kill -KILL "$pid"
set +e
wait "$pid"
set -e
killed=$(find "$KBOUND_RUNTIME_DIR" -mindepth 1 -maxdepth 1 -name 'kbound-*' | head -1)
ok "the killed run left its base folder (nothing can remove it then)" [ -n "$killed" ]
ok "... with the canaries" [ -s "$killed/host-secrets/credentials" ]
home_canary=$(compgen -G "$scratch/home/.kbound-canary-*" || true)
home_recorded() { [ -n "$home_canary" ] && [ "$(cat "$killed/.home-canary")" = "$home_canary" ]; }
ok "... and its canary in the home folder, recorded in the base folder" home_recorded
ok "... but no connection file: it was removed when the kernel became ready" \
  bash -c "! compgen -G '$killed/teams/*/run/kernel.json'"
for _ in $(seq 1 50); do
  pgrep -f "$KBOUND_RUNTIME_DIR" >/dev/null || break
  sleep 0.1
done
no_process() { ! pgrep -f "$KBOUND_RUNTIME_DIR" >/dev/null; }
ok "no process of the killed run is left (the sandbox dies with its parent)" no_process
ok "its lock is free" flock -n "$killed" true
"$KBOUND" doctor 2>&1 | unwrapped >"$scratch/doctor-stale.out" || true
ok "doctor lists it as stale" grep -q "\[WARN\] stale folders: 1 under $KBOUND_RUNTIME_DIR, .*: $killed" "$scratch/doctor-stale.out"
ok "doctor leaves it there" [ -d "$killed" ]
set +e
"$KBOUND" run --kernel python3 'print(6*7)' >"$scratch/sweep.out" 2>"$scratch/sweep.err"
rc=$?
set -e
ok "the next run works (got $rc)" [ "$rc" -eq 0 ]
ok "... says it removed the stale folder" \
  grep -q "kbound: removed $killed: left by a kbound run that did not end cleanly" "$scratch/sweep.err"
ok "... and the home canary, naming it" \
  grep -qF "kbound: removed $home_canary: the home canary of a kbound run that did not end cleanly" "$scratch/sweep.err"
ok "... which is gone" [ ! -e "$home_canary" ]
ok "... and it is gone" empty_runtime
"$KBOUND" doctor 2>&1 | unwrapped >"$scratch/doctor-clean.out" || true
ok "doctor: no stale folder now" grep -q "\[ OK \] stale folders: none of yours under $KBOUND_RUNTIME_DIR" "$scratch/doctor-clean.out"

echo "live runs hold their folders: four at once, with a stale one to sweep"
mkdir -m 0700 "$KBOUND_RUNTIME_DIR/kbound-Stale1"
mkdir -p "$KBOUND_RUNTIME_DIR/kbound-Stale1/teams/x/run"
echo '{"key": "not-a-real-key"}' >"$KBOUND_RUNTIME_DIR/kbound-Stale1/teams/x/run/kernel.json"
for i in 1 2 3 4; do
  "$KBOUND" run --kernel python3 "import time; time.sleep(1); print($i)" >"$scratch/par$i.out" 2>"$scratch/par$i.err" &
done
set +e
failed=0
for job in $(jobs -p); do wait "$job" || failed=$((failed + 1)); done
set -e
ok "four parallel runs all pass ($failed failed)" [ "$failed" -eq 0 ]
for i in 1 2 3 4; do
  ok "parallel run $i printed its own output" [ "$(cat "$scratch/par$i.out")" = "$i" ]
done
ok "the stale folder was removed, and said so once" \
  [ "$(cat "$scratch"/par*.err | grep -c "removed $KBOUND_RUNTIME_DIR/kbound-Stale1")" -eq 1 ]
ok "nothing left behind by the parallel runs" empty_runtime

if [ "$(id -u)" -eq 0 ]; then
  echo "another user's folder, and a file or symlink with a base folder's name, are never touched"
  mkdir -m 0700 "$KBOUND_RUNTIME_DIR/kbound-Other1"
  chown nobody "$KBOUND_RUNTIME_DIR/kbound-Other1"
  echo x >"$KBOUND_RUNTIME_DIR/kbound-File01"
  ln -s / "$KBOUND_RUNTIME_DIR/kbound-Link01"
  "$KBOUND" run --kernel python3 'print(1)' >/dev/null 2>"$scratch/others.err"
  ok "another user's folder stays" [ -d "$KBOUND_RUNTIME_DIR/kbound-Other1" ]
  ok "a file stays" [ -f "$KBOUND_RUNTIME_DIR/kbound-File01" ]
  ok "a symlink stays" [ -L "$KBOUND_RUNTIME_DIR/kbound-Link01" ]
  ok "nothing said about them" bash -c "! grep -q removed '$scratch/others.err'"
  rm -rf "$KBOUND_RUNTIME_DIR/kbound-Other1" "$KBOUND_RUNTIME_DIR/kbound-File01" "$KBOUND_RUNTIME_DIR/kbound-Link01"
else
  echo "  NOT testing another user's folder: making one needs root"
fi

assert_no_leftovers "after the key-life tests"
finish
