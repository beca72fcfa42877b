#!/usr/bin/env bash
# Hostile kernels under `kbound check` (docs/faults.md): the fixture in good mode passes every
# check (the control), and each fault makes exactly the checks it touches fail with the fault
# named, the verdict fail, exit 1 (3 when the kernel never became ready), within the deadline.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

status() { check_status "$scratch/$1.json" "$1" "$2"; }
verdict() { json_get "$scratch/$1.json" "d['verdict']"; }

echo "control: good mode passes the whole check"
check_mode good good 120
expect good 0 60 "^PASS: full boundary held for good" out
for id in identity.pid2 boundary.network interrupt.control interrupt.pidfd persistence.namespace; do
  ok "good: $id pass" [ "$(status good $id)" = "pass" ]
done

echo "bad signatures on every message answering a cell"
check_mode badsig bad-signature 60
expect badsig 1 30 "FAIL +badsig +identity.pid2 +the identity cell gave no answer: cell 'identity': bad message on (shell|iopub): bad signature" out
ok "badsig: verdict fail" [ "$(verdict badsig)" = "fail" ]
ok "badsig: persistence.namespace fail" [ "$(status badsig persistence.namespace)" = "fail" ]
check_mode badsig0 bad-signature 60 --from-start
expect badsig0 3 30 "could not be checked \(cannot start in the sandbox: kernel sent a bad message on (shell|iopub) during start-up: bad signature" out
ok "badsig0: verdict fail" [ "$(verdict badsig0)" = "fail" ]

echo "a frame over twice the limit: libzmq drops the connection, kbound says messages were lost"
check_mode huge oversize-frame 60 --oversize $((40 * 1024 * 1024))
expect huge 1 30 "FAIL +huge +identity.pid2 +the identity cell gave no answer: cell 'identity': lost messages on iopub: connection dropped" out
ok "huge: verdict fail" [ "$(verdict huge)" = "fail" ]

echo "exit in the middle of the first cell: the pidfd says so at once (deadline 60 s)"
check_mode exit42 exit-mid-cell 60 --exit-status 42
expect exit42 1 20 "FAIL +exit42 +identity.pid2 +the identity cell gave no answer: cell 'identity': the kernel exited with status 42" out
ok "exit42: identity.pidfd fail (the pinned process is gone)" [ "$(status exit42 identity.pidfd)" = "fail" ]
ok "exit42: verdict fail" [ "$(verdict exit42)" = "fail" ]

echo "no execute_reply: each cell waits until the run's deadline, which ends the run"
check_mode noreply no-execute-reply 15
expect noreply 1 25 "FAIL +noreply +identity.pid2 +the identity cell gave no answer: cell 'identity': timed out: no execute_reply, although the kernel published busy and idle" out
ok "noreply: report marked incomplete" [ "$(json_get "$scratch/noreply.json" "d['complete']")" = "False" ]
ok "noreply: verdict fail" [ "$(verdict noreply)" = "fail" ]

echo "no kernel_info_reply: never ready; the run's own 10 s deadline ends start-up: incomplete, exit 1"
# (It is exit 3 when check's own 60 s start-up allowance runs out first, as under the default
# 300 s --timeout; test_hostile_liveness.sh asserts exit 3 for `run`, whose --timeout is its
# start-up allowance.)
check_mode noinfo no-kernel-info 10
expect noinfo 1 20 "could not be checked \(cannot start in the sandbox: kernel did not answer kernel_info in time" out
ok "noinfo: verdict fail" [ "$(verdict noinfo)" = "fail" ]
ok "noinfo: report incomplete, the deadline named" \
  [ "$(json_get "$scratch/noinfo.json" "d['incomplete_reason']")" = "the 10 s deadline passed (--timeout)" ]

echo "SIGINT ignored: interrupt_request answered ok, the cell runs on; neither path stops it"
check_mode nosigint ignore-sigint 120
expect nosigint 1 60 "FAIL +nosigint +interrupt.control +interrupt_reply 'ok' but the cell kept running \([0-9]+ steps over [0-9]+ ms\); and the other path did not stop it either" out
ok "nosigint: interrupt.pidfd fail" [ "$(status nosigint interrupt.pidfd)" = "fail" ]
ok "nosigint: persistence.namespace fail (not testable)" [ "$(status nosigint persistence.namespace)" = "fail" ]
ok "nosigint: the boundary checks before it still ran and passed" [ "$(status nosigint boundary.network)" = "pass" ]

echo "interrupt_reply ok without stopping the cell (interrupt_mode message): control fails, SIGINT passes"
check_mode replynostop interrupt-reply-no-stop 120
expect replynostop 1 45 "FAIL +replynostop +interrupt.control +interrupt_reply 'ok' but the cell kept running" out
ok "replynostop: interrupt.pidfd pass" [ "$(status replynostop interrupt.pidfd)" = "pass" ]
ok "replynostop: persistence.namespace pass (the pidfd path freed the kernel)" \
  [ "$(status replynostop persistence.namespace)" = "pass" ]
ok "replynostop: verdict fail" [ "$(verdict replynostop)" = "fail" ]

# interrupt.control's evidence of LABEL's report: EXPR over its evidence e (Python), printed.
control_ev() {
  json_get "$scratch/$1.json" "[(lambda e: $2)(c['evidence']) for k in d['kernels'] for c in k['checks'] if c['id']=='interrupt.control'][0]"
}

echo "no interrupt_reply at all (interrupt_mode message): the full proof, control fails, SIGINT passes"
check_mode noreply_msg no-interrupt-reply 120
expect noreply_msg 1 45 "FAIL +noreply_msg +interrupt.control +no interrupt_reply and the cell kept running \([0-9]+ steps over [0-9]+ ms after the request\)" out
ok "noreply_msg: no reply window, the cell watched for 10 of its steps" \
  [ "$(control_ev noreply_msg "(e['reply_window_ms'], e['steps_after_interrupt'] >= 10, e['interrupt_reply'])")" = "(None, True, None)" ]
ok "noreply_msg: interrupt.pidfd pass" [ "$(status noreply_msg interrupt.pidfd)" = "pass" ]

echo "the same kernel declaring interrupt_mode signal: unsupported once the reply window is over, SIGINT frees the cell"
HOSTILE_INTERRUPT_MODE=signal check_mode noreply_sig no-interrupt-reply 120
expect noreply_sig 0 45 - out
ok "noreply_sig: interrupt.control unsupported" [ "$(status noreply_sig interrupt.control)" = "unsupported" ]
ok "noreply_sig: the detail names the window (got: $(detail noreply_sig interrupt.control))" \
  grep -qE "^no interrupt_reply within the 250 ms a kernel that honours interrupt_request takes, and the host saw the cell keep running \([0-9]+ steps over [0-9]+ ms after the request\); the kernelspec declares interrupt_mode 'signal'" \
  <<<"$(detail noreply_sig interrupt.control)"
ok "noreply_sig: the evidence says how long the cell was watched, past the window, and that SIGINT freed it" \
  [ "$(control_ev noreply_sig "(e['reply_window_ms'], e['watched_ms'] >= 250, e['steps_after_interrupt'] >= 1, e['interrupt_reply'], e['unblocked_by_other_path'])")" = "(250, True, True, None, True)" ]
ok "noreply_sig: interrupt.pidfd and persistence.namespace pass" \
  [ "$(status noreply_sig interrupt.pidfd) $(status noreply_sig persistence.namespace)" = "pass pass" ]

echo "an interrupt_reply that comes only after SIGINT stopped the cell: recorded as late, still unsupported"
HOSTILE_INTERRUPT_MODE=signal check_mode late_sig interrupt-reply-after-sigint 120
expect late_sig 0 45 - out
ok "late_sig: interrupt.control unsupported" [ "$(status late_sig interrupt.control)" = "unsupported" ]
# The reply follows the SIGINT that stopped the cell; whether the host has it when it words the
# check (then the detail says so) or a moment later (then the evidence alone holds it, as for
# later_sig below) is the order of two sockets' messages, which the scheduler decides.
ok "late_sig: the detail says no reply came in the window, and names the late one if it was there (got: $(detail late_sig interrupt.control))" \
  grep -qE "^no interrupt_reply within .*(; its interrupt_reply came later, after SIGINT had been sent|interrupt_request on control is optional)" <<<"$(detail late_sig interrupt.control)"
ok "late_sig: the evidence holds the late reply, after the watch" \
  [ "$(control_ev late_sig "(e['interrupt_reply'], e['interrupt_reply_late']['status'], e['interrupt_reply_late']['after_ms'] >= e['watched_ms'])")" = "(None, 'ok', True)" ]

echo "the same reply 1 s after SIGINT, after the check was decided: still recorded, taken while the host reads on"
HOSTILE_INTERRUPT_MODE=signal check_mode later_sig interrupt-reply-after-sigint 120 --late-ms 1000
expect later_sig 0 45 - out
ok "later_sig: interrupt.control unsupported, its detail without the reply (got: $(detail later_sig interrupt.control))" \
  bash -c '[ "$1" = unsupported ] && ! grep -qF "its interrupt_reply came later" <<<"$2"' _ \
  "$(status later_sig interrupt.control)" "$(detail later_sig interrupt.control)"
ok "later_sig: the evidence holds the late reply" \
  [ "$(control_ev later_sig "(e['interrupt_reply'], e.get('interrupt_reply_late', {}).get('status'), e.get('interrupt_reply_late', {}).get('after_ms', 0) >= e['watched_ms'] + 1000)")" = "(None, 'ok', True)" ]

assert_no_leftovers "after check against hostile kernels"
finish
