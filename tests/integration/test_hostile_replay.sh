#!/usr/bin/env bash
# Hostile kernels that replay validly signed messages (docs/faults.md, "Replays"): kbound keeps a
# bounded history of the signatures and msg_ids each connection received, as jupyter_client's
# Session keeps its digest_history, and refuses a repeat with the channel and message type named:
# run exits 1 without printing the cell's output (3 at start-up), check fails the checks it hits,
# conformance fails the kernel.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

echo "run: a replayed stream message, a second execute_reply or idle, a reused msg_id"
run_mode stream replay-stream 30
# Before the history, run printed 42 fifty times and exited 0.
expect stream 1 20 "kernel 'stream': bad message on iopub: replayed message \(msg_type 'stream'\): its signature was already seen on this connection \(refused\)"
ok "stream: nothing printed as the cell's output" [ ! -s "$scratch/stream.out" ]
run_mode reply replay-reply 30
expect reply 1 20 "kernel 'reply': bad message on (shell|iopub): replayed message \(msg_type '(execute_reply|status)'\)"
ok "reply: nothing printed as the cell's output" [ ! -s "$scratch/reply.out" ]
run_mode reuse reuse-msg-id 30
# The first message that repeats the reused msg_id is whichever kbound reads second: iopub's
# execute_input after its busy, or, when kbound read the shell's execute_reply first, iopub's busy.
expect reuse 1 20 "kernel 'reuse': bad message on (shell|iopub): reused msg_id \(msg_type '(execute_input|status|execute_reply)'\): an earlier message on this connection had the same msg_id \(refused\)"
ok "reuse: nothing printed as the cell's output" [ ! -s "$scratch/reuse.out" ]

echo "the same from the first kernel_info_reply on: refused, exit 3 at start-up (1 just after it)"
# The copy follows its original: when kbound has read the original kernel_info_reply and its idle
# and is ready before the copy arrives, the copy is met by the cell's first read (exit 1, the same
# message type named); both are refusals, which one depends on the scheduler alone.
expect_start_refusal() {
  local label=$1 what=$2
  if [ "$rc" -eq 1 ]; then
    expect "$label" 1 20 "kernel '$label': bad message on (shell|iopub): $what \(msg_type '(kernel_info_reply|status)'\)"
    ok "$label: nothing printed as the cell's output" [ ! -s "$scratch/$label.out" ]
  else
    expect "$label" 3 20 "cannot start in the sandbox: kernel sent a bad message on (shell|iopub) during start-up: $what \(msg_type '(kernel_info_reply|status)'\)"
  fi
}
run_mode reply0 replay-reply 30 --from-start
expect_start_refusal reply0 "replayed message"
run_mode reuse0 reuse-msg-id 30 --from-start
expect_start_refusal reuse0 "reused msg_id"

echo "check: the checks whose cells meet a replay fail, with the replay named"
check_mode creply replay-reply 60
expect creply 1 40 "FAIL +creply +identity.pid2 +.*cell 'identity': bad message on (shell|iopub): replayed message" out
ok "creply: verdict fail" [ "$(json_get "$scratch/creply.json" "d['verdict']")" = "fail" ]
check_mode creuse reuse-msg-id 60
expect creuse 1 40 "FAIL +creuse +identity.pid2 +.*cell 'identity': bad message on (shell|iopub): reused msg_id" out
ok "creuse: verdict fail" [ "$(json_get "$scratch/creuse.json" "d['verdict']")" = "fail" ]

echo "conformance: a kernel that replays fails; the same fixture in good mode is the control"
# item LABEL ID FIELD: one field (status, detail) of one conformance item.
item() {
  json_get "$scratch/$1.json" "next((c['$3'] for k in d['kernels'] for c in k['checks'] if c['id']=='$2'), 'missing')"
}
contains() { printf '%s' "$1" | grep -qF -- "$2"; }
conf() {
  local label=$1 mode=$2
  timed "$label" "$KBOUND" conformance --quiet --kernel "$(hostile_spec "$label" "$mode")" "${bind[@]}" \
    --timeout 20 --json "$scratch/$label.json"
}
# The fixture answers no is_complete_request, so both runs end at their deadline; the items before
# that are what is compared.
conf freplay replay-stream &
conf fgood good &
wait
ok "freplay: exit 1 (got $(json_get "$scratch/freplay.json" "d['exit_code']"))" \
  [ "$(json_get "$scratch/freplay.json" "d['exit_code']")" = 1 ]
ok "freplay: execute.stdout fails" [ "$(item freplay execute.stdout status)" = fail ]
ok "freplay: ... on the replay, named" \
  contains "$(item freplay execute.stdout detail)" "bad message on iopub: replayed message (msg_type 'stream')"
ok "fgood: execute.stdout passes in good mode (the control)" [ "$(item fgood execute.stdout status)" = pass ]
ok "fgood: no replay anywhere in good mode" bash -c "! grep -q 'replayed message\|reused msg_id' '$scratch/fgood.json'"

assert_no_leftovers "after the replaying kernels"
finish
