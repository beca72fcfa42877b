#!/usr/bin/env bash
# Kernels that lie in their probe output (real ipykernel, monkeypatched at start-up:
# tests/fixtures/lying-kernel) must still fail the check the lie was meant to pass: the host proves,
# the cell only reports. Each lie is shown against the sandbox breakage it would hide.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

# The liars are bound at their own path, outside /tmp: a sandbox with the host's /tmp bound over its
# own (LEAK=write below) would hide them there, and the kernel would start honest, without its lie.
liars=$(mktemp -d /dev/shm/kbound-liars-XXXXXX)
cleanup_paths+=("$liars")
cp -R "$fixtures/lying-kernel/." "$liars"
chmod -R a+rX "$liars"
token="kbound-lie-token-$RANDOM$RANDOM$RANDOM"

# lying_spec NAME LIE [forwarder]: a python3 kernelspec that loads $liars/LIE at start-up; with
# "forwarder", a shell stays PID 2 and the kernel runs as PID 3.
lying_spec() {
  local name=$1 lie=$2 forwarder=${3:-} dir="$scratch/kernels/$1"
  mkdir -p "$dir"
  /usr/bin/python3 - "$dir/kernel.json" "$liars/$lie" "$forwarder" <<'PY'
import json, sys
path, lie, forwarder = sys.argv[1:4]
kernel = ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}",
          "--IPKernelApp.exec_files=" + lie]
if forwarder:
    # the shell does not exec: it stays PID 2 and forwards nothing; the kernel is its child
    kernel = ["/bin/sh", "-c", "/usr/bin/python3 -m ipykernel_launcher -f \"$1\" --IPKernelApp.exec_files=\"$2\"; exit $?",
              "sh", "{connection_file}", lie]
json.dump({"argv": kernel, "display_name": "liar", "language": "python", "interrupt_mode": "signal"},
          open(path, "w"))
PY
  echo "$dir"
}

# expect_fail LABEL CHECK_ID PATTERN KERNEL_DIR [check options...]: the check fails with PATTERN in its detail.
expect_fail() {
  local label=$1 id=$2 pattern=$3 spec=$4
  shift 4
  set +e
  KBOUND_TEST_DAEMON_TOKEN="$token" "$KBOUND" check --quiet --kernel "$spec" --ro-bind "$liars" \
    --json "$scratch/$label.json" "$@" >"$scratch/$label.out" 2>"$scratch/$label.err"
  local rc=$?
  set -e
  ok "$label: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
  [ "$rc" -eq 1 ] || tail -5 "$scratch/$label.err"
  local detail
  detail=$(json_get "$scratch/$label.json" "[c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='$id'][0]")
  ok "$label: $id fails" [ "$(check_status "$scratch/$label.json" liar "$id")" = "fail" ]
  ok "$label: $id says '$pattern' (got: $detail)" grep -qF -- "$pattern" <<<"$detail"
}

echo "a shell is PID 2, the real kernel PID 3, and the kernel swears it is PID 2"
spec=$(lying_spec liar lie_pid.py forwarder)
expect_fail pid3 identity.pid2 "PID 2 is not the kernel" "$spec"
ok "pid3: the identity cell lied (it says pid 2)" \
  [ "$(json_get "$scratch/pid3.json" "[c['evidence']['cell']['pid'] for k in d['kernels'] for c in k['checks'] if c['id']=='identity.pid2'][0]")" = "2" ]
ok "pid3: the evidence names the real holder, PID 3 in the sandbox" \
  grep -q "(PID 3 in the sandbox)" <<<"$(json_get "$scratch/pid3.json" "[c['evidence']['problems'] for k in d['kernels'] for c in k['checks'] if c['id']=='identity.pid2'][0]")"

echo "the kernel refuses the probe's escape writes while the host's /tmp is bound writable"
spec=$(lying_spec liar lie_noescape.py)
expect_fail noescape boundary.write_outside "is backed by the host" "$spec" --bwrap "$(leaky_bwrap write)"
ok "noescape: the cell says all its writes failed (the lie worked on the cell)" \
  [ "$(json_get "$scratch/noescape.json" "[c['evidence']['sandbox_private_writes'] for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.write_outside'][0]")" -eq 0 ]
json_read problems "$scratch/noescape.json" \
  "[c['evidence']['problems'] for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.write_outside'][0]"
ok "noescape: the host's finding is among the problems" grep -qF "is backed by the host" <<<"$problems"
ok "noescape: so the failure is the host's finding, not the cell's" bash -c '! grep -qF "the cell created a file" <<<"$1"' _ \
  "$problems"

echo "the kernel's subprocess dumps a clean environment while a daemon secret is in the kernel's"
spec=$(lying_spec liar lie_dump.py)
expect_fail dump boundary.credentials "env:KBOUND_TEST_DAEMON_TOKEN is in the environment of pid" "$spec" \
  --bwrap "$(leaky_bwrap secret "$token")"
ok "dump: the cell's dump was clean (the lie worked on the cell)" \
  [ "$(json_get "$scratch/dump.json" "[c['evidence']['processes_read_by_cell'] for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.credentials'][0]")" = "2" ]
ok "no report holds the token" bash -c "! grep -rqs '$token' '$scratch'/*.json '$scratch'/*.out '$scratch'/*.err"

echo "the kernel ignores SIGINT and ends its long cells by itself, just after the interrupt"
spec=$(lying_spec liar lie_nointr.py)
expect_fail nointr interrupt.pidfd "the kernel process ignores SIGINT (SigIgn)" "$spec"
ok "nointr: the host read SIGINT as ignored before sending" \
  [ "$(json_get "$scratch/nointr.json" "[c['evidence']['sigint_before']['ignored'] for k in d['kernels'] for c in k['checks'] if c['id']=='interrupt.pidfd'][0]")" = True ]

echo "the kernel answers interrupts at once with KeyboardInterrupt while the long cell goes on in a thread"
spec=$(lying_spec liar lie_fakeintr.py)
expect_fail fakeintr interrupt.pidfd "but the host saw the cell go on: its progress went from" "$spec"
ok "fakeintr: interrupt.control fails the same way" \
  [ "$(check_status "$scratch/fakeintr.json" liar interrupt.control)" = fail ]
ok "fakeintr: the kernel's reply said KeyboardInterrupt (the lie worked on the protocol)" \
  [ "$(json_get "$scratch/fakeintr.json" "[c['evidence']['execute_reply_status'] for k in d['kernels'] for c in k['checks'] if c['id']=='interrupt.pidfd'][0]")" = error ]
ok "fakeintr: the evidence holds the counts the host read" \
  [ "$(json_get "$scratch/fakeintr.json" "[c['evidence']['progress']['after'] > c['evidence']['progress']['at_reply'] for k in d['kernels'] for c in k['checks'] if c['id']=='interrupt.pidfd'][0]")" = True ]

echo "a kernel that dies on SIGINT: the interrupt check names the death and the signal"
spec=$(lying_spec liar die_on_sigint.py)
expect_fail dies interrupt.control "the kernel died on interrupt_request: the kernel exited with status 130 (killed by signal 2 SIGINT)" "$spec"

echo "a kernel holding a zombie child: its shutdown_reply comes, ipykernel would wait ~29 s for the child, the host says it is late, names the child and ends it with a kernel manager's SIGTERM"
spec=$(lying_spec liar zombie_child.py)
set +e
"$KBOUND" check --quiet --kernel "$spec" --ro-bind "$liars" --json "$scratch/zombie.json" >"$scratch/zombie.out" 2>"$scratch/zombie.err"
rc=$?
set -e
ok "zombie: exit 0, the kernel went (rc=$rc)" [ "$rc" -eq 0 ]
zdetail=$(json_get "$scratch/zombie.json" "[c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='lifecycle.shutdown'][0]")
ok "zombie: lifecycle.shutdown passes, late (got: $zdetail)" \
  [ "$(check_status "$scratch/zombie.json" liar lifecycle.shutdown)" = "pass" ]
ok "zombie: the detail says it did not go on its own, names the child the host saw, a zombie, and the SIGTERM" \
  grep -qE "did not exit on its own: still running 15000 ms after the reply \(its child processes then: host pid [0-9]+ [^ ]+ \(Z\);.*ended on the SIGTERM" <<<"$zdetail"
ok "zombie: the evidence lists it, the SIGTERM at 15 s and an exit after it" \
  [ "$(json_get "$scratch/zombie.json" "[([x['state'] for x in c['evidence']['still_running']['children']], c['evidence']['late'], c['evidence']['sigterm_ms'] >= 15000, c['evidence']['exit_ms'] >= c['evidence']['sigterm_ms']) for k in d['kernels'] for c in k['checks'] if c['id']=='lifecycle.shutdown'][0]")" = "(['Z'], True, True, True)" ]

echo "a kernel that never exits on its own after its shutdown_reply (a thread the interpreter's exit joins forever): the host names the thread it waits in, and a kernel manager's SIGTERM ends it"
spec=$(lying_spec liar stuck_exit.py)
set +e
"$KBOUND" check --quiet --kernel "$spec" --ro-bind "$liars" --json "$scratch/stuck.json" >"$scratch/stuck.out" 2>"$scratch/stuck.err"
rc=$?
set -e
sdetail=$(json_get "$scratch/stuck.json" "[c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='lifecycle.shutdown'][0]")
ok "stuck: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "stuck: lifecycle.shutdown passes, late (got: $sdetail)" \
  [ "$(check_status "$scratch/stuck.json" liar lifecycle.shutdown)" = "pass" ]
ok "stuck: the detail says it did not exit on its own and the SIGTERM ended it" \
  grep -qE "did not exit on its own.*ended on the SIGTERM a kernel manager sends" <<<"$sdetail"
ok "stuck: the evidence lists the kernel's threads as the host read them, one waiting in the kernel (wchan), then the SIGTERM" \
  [ "$(json_get "$scratch/stuck.json" "[(len(c['evidence']['still_running']['threads']) >= 2, any(t.get('wchan') for t in c['evidence']['still_running']['threads']), c['evidence']['sigterm_ms'] >= 15000, c['evidence']['exit_ms'] is not None) for k in d['kernels'] for c in k['checks'] if c['id']=='lifecycle.shutdown'][0]")" = "(True, True, True, True)" ]

echo "a kernel that never exits on its own and ignores SIGTERM: it did not shut down"
spec=$(lying_spec liar stuck_noterm.py)
expect_fail noterm lifecycle.shutdown "after the SIGTERM a kernel manager sends then" "$spec"
ok "noterm: the evidence says the SIGTERM was sent and no exit followed" \
  [ "$(json_get "$scratch/noterm.json" "[(c['evidence']['sigterm_ms'] >= 15000, c['evidence']['exit_ms']) for k in d['kernels'] for c in k['checks'] if c['id']=='lifecycle.shutdown'][0]")" = "(True, None)" ]

echo "a kernel that replaces its process image (execve) on the request after its second interrupt, restores its variables and answers it from the new image, still PID 2"
spec=$(lying_spec liar reexec.py)
expect_fail reexec persistence.namespace "replaced its process image (execve) since the first look" "$spec"
ok "reexec: the interrupt that leaned on the same kernel fails too" \
  [ "$(check_status "$scratch/reexec.json" liar interrupt.pidfd)" = "fail" ]
ok "reexec: the evidence says the image is not the same" \
  [ "$(json_get "$scratch/reexec.json" "[c['evidence']['same_image'] for k in d['kernels'] for c in k['checks'] if c['id']=='interrupt.pidfd'][0]")" = "False" ]
ok "reexec: the detail names what moved, from where to where" \
  grep -qE "moved from 0x[0-9a-f]+ to 0x[0-9a-f]+" <<<"$(json_get "$scratch/reexec.json" "[c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='persistence.namespace'][0]")"

echo "the kernel hides a host file's descriptor (handed in as fd 7) in a socket's queue before the host looks"
hostfile="$scratch/stash-target"
echo "host data" >"$hostfile"
chmod 666 "$hostfile"
spec=$(lying_spec liar lie_stash.py)
expect_fail stash boundary.descriptors "before the kernel ran, fd 7 of the sandbox's PID 1" "$spec" \
  --bwrap "$(leaky_bwrap fd "$hostfile")"
ok "stash: the kernel did write through it (the stash worked)" grep -q "written by the kernel" "$hostfile"
json_read problems "$scratch/stash.json" \
  "[c['evidence']['problems'] for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.descriptors'][0]"
ok "stash: the look before exec saw it" grep -qF "fd 7 of the sandbox's PID 1" <<<"$problems"
ok "stash: no look after exec saw fd 7 (only the look before exec can)" bash -c '! grep -qF "fd 7 of pid" <<<"$1"' _ "$problems"

echo "the same liars in kbound's real sandbox: the lies alone fail nothing they should not"
spec=$(lying_spec liar lie_noescape.py)
set +e
"$KBOUND" check --quiet --kernel "$spec" --ro-bind "$liars" --json "$scratch/honest.json" >"$scratch/honest.out" 2>&1
rc=$?
set -e
ok "lie_noescape in the real sandbox: boundary.write_outside passes (rc=$rc)" \
  [ "$(check_status "$scratch/honest.json" liar boundary.write_outside)" = "pass" ]
ok "lie_noescape in the real sandbox: the lie was told (no private write reported)" \
  [ "$(json_get "$scratch/honest.json" "[c['evidence']['sandbox_private_writes'] for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.write_outside'][0]")" -eq 0 ]
assert_no_leftovers "after the lying kernels"
finish
