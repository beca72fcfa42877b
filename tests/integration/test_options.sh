#!/usr/bin/env bash
# Bad options get one validation across every command that starts kernels (check, run,
# conformance, console): a usage error (exit 2) that says what is wrong, before anything is
# created or started. And kbound's own deadline ends a run as docs/faults.md says: check and
# conformance cut short by --timeout are incomplete (exit 1), run's start-up past --timeout is a
# kernel that never became ready (exit 3), the deadline named either way.
source "$(dirname "$0")/lib.sh"
require bwrap

# usage LABEL PATTERN COMMAND...: exit 2, PATTERN on stderr, nothing on stdout, no kernel started.
usage() {
  local label=$1 pattern=$2
  shift 2
  set +e
  "$KBOUND" "$@" >"$scratch/$label.out" 2>"$scratch/$label.err" </dev/null
  local rc=$?
  set -e
  ok "$label: exit 2 (got $rc)" [ "$rc" -eq 2 ]
  ok "$label: stderr says /$pattern/" grep -Eq -- "$pattern" "$scratch/$label.err"
  ok "$label: no kernel was started" bash -c "! grep -q 'starting in bubblewrap' '$scratch/$label.err'"
  if [ "$rc" -ne 2 ] || ! grep -Eq -- "$pattern" "$scratch/$label.err"; then
    sed 's/^/    | /' "$scratch/$label.err" | head -5 >&2
  fi
}

# code_arg CMD: the CODE argument run needs; nothing for the others.
code_arg() { if [ "$1" = run ]; then echo 'print(1)'; fi; }

echo "--timeout: decimal seconds only, 1 ms to one day, the same for every command"
for cmd in check run conformance console; do
  for bad in 1e-9 0x10 inf nan -1 +5 ' 5' .5 5. 1,5 '' 3s; do
    usage "$cmd-timeout-[$bad]" "$cmd: --timeout takes seconds as decimal digits" \
      "$cmd" --kernel python3 --timeout "$bad" $(code_arg "$cmd")
  done
  for bad in 0 0.0 0.0009 86400.5 86401 99999999999999999999; do
    usage "$cmd-timeout-[$bad]" "$cmd: --timeout $bad is out of range: at least 0.001 s \(1 ms\), at most 86400 s" \
      "$cmd" --kernel python3 --timeout "$bad" $(code_arg "$cmd")
  done
done

echo "--team: the same rule for every command, each broken rule named"
long=$(head -c 5000 /dev/zero | tr '\0' x)
for cmd in check run conformance console; do
  usage "$cmd-team-slash" "$cmd: --team 'a/b' has '/' \(a path separator\) at character 2" \
    "$cmd" --kernel python3 --team a/b $(code_arg "$cmd")
  usage "$cmd-team-dotdot" "$cmd: --team '\.\.' starts with '\.': refused" \
    "$cmd" --kernel python3 --team .. $(code_arg "$cmd")
  usage "$cmd-team-long" "$cmd: --team 'x{40}\.\.\.' is 5000 characters long: at most (40|64)" \
    "$cmd" --kernel python3 --team "$long" $(code_arg "$cmd")
  usage "$cmd-team-bell" "$cmd: --team 'ab' has a control character \(0x07\) at character 2" \
    "$cmd" --kernel python3 --team $'a\x07b' $(code_arg "$cmd")
  usage "$cmd-team-escape" "$cmd: --team 'ab.*' has a control character \(0x1b\) at character 3" \
    "$cmd" --kernel python3 --team $'ab\x1b]0;PWNED\x07' $(code_arg "$cmd")
  usage "$cmd-team-empty" "$cmd: --team is empty" "$cmd" --kernel python3 --team '' $(code_arg "$cmd")
done
echo "--sockets and --allow-syscall: the seccomp policy, the same for every command"
for cmd in check run conformance console; do
  usage "$cmd-sockets-tcp" "$cmd: --sockets takes default, unix or inet, not 'tcp'" \
    "$cmd" --kernel python3 --sockets tcp $(code_arg "$cmd")
  usage "$cmd-allow-unknown" "$cmd: --allow-syscall frobnicate: no such entry in the seccomp filter" \
    "$cmd" --kernel python3 --allow-syscall frobnicate $(code_arg "$cmd")
  usage "$cmd-allow-family" "$cmd: --allow-syscall AF_VSOCK: socket families are chosen with --sockets" \
    "$cmd" --kernel python3 --allow-syscall AF_VSOCK $(code_arg "$cmd")
done
# conformance always isolates the network; the others take the override
for cmd in check run console; do
  OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=1 usage "$cmd-sockets-unix-rawnet" \
    "$cmd: --sockets unix refuses IP sockets, which the raw-network override is for" \
    "$cmd" --kernel python3 --sockets unix $(code_arg "$cmd")
done

ok "no raw escape reached stderr" bash -c "! grep -q $'\x1b' '$scratch'/*-team-escape.err"
assert_no_leftovers "after the usage errors"

echo "kbound's own deadline: check and conformance incomplete (exit 1), run's start-up exit 3"
set +e
"$KBOUND" check --quiet --kernel python3 --timeout 0.2 --json "$scratch/short.json" >"$scratch/short.out" 2>"$scratch/short.err"
rc=$?
set -e
ok "check --timeout 0.2: exit 1, not 3 (got $rc)" [ "$rc" -eq 1 ]
ok "check --timeout 0.2: report incomplete" [ "$(json_get "$scratch/short.json" "d['complete']")" = "False" ]
ok "check --timeout 0.2: the reason names the deadline" \
  [ "$(json_get "$scratch/short.json" "d['incomplete_reason']")" = "the 0.2 s deadline passed (--timeout)" ]
set +e
"$KBOUND" conformance --quiet --kernel python3 --timeout 0.2 --json "$scratch/shortc.json" >/dev/null 2>&1
rc=$?
set -e
ok "conformance --timeout 0.2: exit 1, not 3 (got $rc)" [ "$rc" -eq 1 ]
ok "conformance --timeout 0.2: report incomplete" [ "$(json_get "$scratch/shortc.json" "d['complete']")" = "False" ]
set +e
"$KBOUND" run --kernel python3 --timeout 0.001 'print(1)' >"$scratch/run1ms.out" 2>"$scratch/run1ms.err"
rc=$?
set -e
ok "run --timeout 0.001: exit 3, never ready (got $rc)" [ "$rc" -eq 3 ]
ok "run --timeout 0.001: the deadline is named" \
  grep -q "kernel 'python3': cannot start in the sandbox within 0.001 s (--timeout)" "$scratch/run1ms.err"
assert_no_leftovers "after the deadline runs"

finish
