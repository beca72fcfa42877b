#!/usr/bin/env bash
# Hostile kernels, liveness and set-up faults (docs/faults.md): silence ends at the deadline with
# what was and was not seen; death is seen through the pidfd at once, with the exit status; a
# kernelspec or connection file that cannot work fails at once with the reason. Exit 3 when the
# kernel never became ready in the sandbox, 1 once it was up.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

echo "silence"
run_mode noinfo no-kernel-info 6
expect noinfo 3 16 "cannot start in the sandbox within 6 s \(--timeout\): kernel did not answer kernel_info in time"
run_mode noreply no-execute-reply 6
expect noreply 1 16 "the cell did not complete within 6.0 s: no execute_reply, although the kernel published busy and idle for the request"
ok "noreply: the output that did arrive is not printed as a result" [ ! -s "$scratch/noreply.out" ]
run_mode endpoints wrong-endpoints 6
expect endpoints 3 16 "kernel did not answer kernel_info in time"

echo "death in the middle of a cell: seen through the pidfd, not at the 60 s deadline"
run_mode exit42 exit-mid-cell 60 --exit-status 42
expect exit42 1 20 "died while running the cell: the kernel exited with status 42; its log ends: .*exiting with status 42"
run_mode exit7 exit-mid-cell 60 --exit-status 7
expect exit7 1 20 "died while running the cell: the kernel exited with status 7;"

echo "a silent heartbeat does not fail run or check: they never rely on it (the pidfd says alive or dead)"
run_mode hb silent-heartbeat 30
expect hb 0 40 -
ok "hb: the cell ran" [ "$(cat "$scratch/hb.out")" = "42" ]
# ... but the protocol claims it: conformance names the silent heartbeat (its heartbeat item runs
# first; the rest of the run is cut by the deadline, as the fixture answers no is_complete). The
# same fixture in good mode is the control: its heartbeat item passes.
hb_conformance() {
  local label=$1 mode=$2
  timed "$label" "$KBOUND" conformance --kernel "$(hostile_spec "$label" "$mode")" "${bind[@]}" --timeout 12 \
    --json "$scratch/$label.json"
}
hb_conformance hbconf silent-heartbeat &
hb_conformance hbgood good &
wait
for label in hbconf hbgood; do
  ok "$label: a JSON report was written" [ -s "$scratch/$label.json" ]
  ok "$label: the run fails (exit_code 1: cut by its deadline)" \
    [ "$(json_get "$scratch/$label.json" "d['exit_code']")" = 1 ]
done
hb_item() { json_get "$scratch/$1.json" "next(c['status']+': '+c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='heartbeat')"; }
ok "hbconf: the heartbeat item fails, named ($(hb_item hbconf))" bash -c "[[ '$(hb_item hbconf)' == 'fail: no heartbeat echo'* ]]"
ok "hbgood: the control's heartbeat item passes ($(hb_item hbgood))" bash -c "[[ '$(hb_item hbgood)' == pass:* ]]"
assert_no_leftovers "after the heartbeat conformance runs"

echo "a kernelspec whose program is missing"
mkdir -p "$scratch/kernels/missing" "$scratch/kernels/missing-rel"
echo '{"argv": ["/usr/bin/no-such-kernel-program", "-f", "{connection_file}"], "display_name": "missing", "language": "python"}' \
  >"$scratch/kernels/missing/kernel.json"
echo '{"argv": ["no-such-kernel-program", "-f", "{connection_file}"], "display_name": "missing", "language": "python"}' \
  >"$scratch/kernels/missing-rel/kernel.json"
# The preflight finds it before anything starts (never a late "bwrap: execvp" under sandbox.backend).
timed missing "$KBOUND" run --kernel "$scratch/kernels/missing" --timeout 30 'x'
expect missing 3 10 "kernel 'missing': its program '/usr/bin/no-such-kernel-program' does not exist, inside the sandbox or on the host"
ok "missing: no late execvp failure" bash -c "! grep -q execvp '$scratch/missing.err'"
timed missingrel "$KBOUND" run --kernel "$scratch/kernels/missing-rel" --timeout 30 'x'
expect missingrel 3 10 "its program 'no-such-kernel-program' is not on the kernel's PATH, inside the sandbox or on the host \\(PATH="
timed missingplain "$KBOUND" run --sandbox off --kernel "$scratch/kernels/missing" --timeout 30 'x'
expect missingplain 1 10 "cannot start: kernel program '/usr/bin/no-such-kernel-program' not found"
timed missingcheck "$KBOUND" check --quiet --kernel "$scratch/kernels/missing" --timeout 30 --json "$scratch/missingcheck.json"
expect missingcheck 3 15 "kernel 'missing': its program '/usr/bin/no-such-kernel-program' does not exist"
ok "missingcheck: nothing was started: its report says refused, exit 3, every check of the kernel not run" \
  [ "$(json_get "$scratch/missingcheck.json" "str(d['refused']) + ' ' + str(d['exit_code']) + ' ' + str(sorted({c['status'] for k in d['kernels'] for c in k['checks']}))")" = "True 3 ['not_run']" ]

echo "a connection file the kernel cannot use"
# kbound writes the connection file itself; what a kernelspec can get wrong is where it tells the
# kernel to read it: the kernel then dies at start-up, and its own words are in the diagnosis.
mkdir -p "$scratch/kernels/badconn"
/usr/bin/python3 -c 'import json,sys; json.dump({"argv": ["/usr/bin/python3", sys.argv[1], "/run/kbound/no-such-connection.json"], "display_name": "badconn", "language": "python"}, open(sys.argv[2], "w"))' \
  "$hostile" "$scratch/kernels/badconn/kernel.json"
timed badconn "$KBOUND" run --kernel "$scratch/kernels/badconn" "${bind[@]}" --timeout 30 'x'
expect badconn 3 15 "kernel exited during start-up: the kernel exited with status 1; its log's error line: FileNotFoundError.*no-such-connection.json.*; its log ends: .*FileNotFoundError"

echo "a kernel.json that is a FIFO is refused, not waited on"
mkdir -p "$scratch/kernels/fifo"
mkfifo "$scratch/kernels/fifo/kernel.json"
# timeout(1) only turns a regression (a hang in open) into a failure instead of a stuck test.
timed fifo timeout 20 "$KBOUND" run --kernel "$scratch/kernels/fifo" 'x'
expect fifo 3 10 "its kernel.json is not a regular file"

assert_no_leftovers "after liveness faults"
finish
