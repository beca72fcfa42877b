#!/usr/bin/env bash
# kbound console: typed into in tmux as an auditor would (console_tmux.py: the kernel's indent,
# Tab, name?, the pager, a cell per history entry, Ctrl-R) and driven through a real
# pseudo-terminal (console_pty.py types the cells, Ctrl-C and Ctrl-D) for python3 and ir, and
# scripted with stdin from a here-doc; kernel death ends it with 1.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R tmux

# run_pty KERNEL LANG [ARGS...]: one ok per assertion the driver reports.
run_pty() {
  local kernel=$1
  set +e
  XDG_STATE_HOME="$scratch/state-$kernel" /usr/bin/python3 "$KBOUND_SOURCE_DIR/tests/integration/console_pty.py" "$KBOUND" "$@" \
    >"$scratch/pty.out" 2>"$scratch/pty.transcript"
  local rc=$?
  set -e
  local n=0
  while read -r word status name; do
    [ "$word" = RESULT ] || continue
    n=$((n + 1))
    ok "$kernel (pty): $name" [ "$status" = 0 ]
  done <"$scratch/pty.out"
  ok "$kernel (pty): the driver made its assertions ($n)" [ "$n" -ge 22 ]
  if [ "$rc" -ne 0 ]; then
    echo "--- pty transcript ($kernel) ---" >&2
    cat "$scratch/pty.transcript" >&2
  fi
}

# run_tmux KERNEL LANG: one ok per assertion the tmux driver reports.
run_tmux() {
  local kernel=$1
  set +e
  /usr/bin/python3 "$KBOUND_SOURCE_DIR/tests/integration/console_tmux.py" "$KBOUND" "$@" "$scratch" \
    >"$scratch/tmux.out" 2>"$scratch/tmux.screen"
  local rc=$?
  set -e
  local n=0
  while read -r word status name; do
    [ "$word" = RESULT ] || continue
    n=$((n + 1))
    ok "$kernel (tmux): $name" [ "$status" = 0 ]
  done <"$scratch/tmux.out"
  ok "$kernel (tmux): the driver made its assertions ($n)" [ "$n" -ge 30 ]
  if [ "$rc" -ne 0 ]; then
    echo "--- tmux screen ($kernel) ---" >&2
    cat "$scratch/tmux.screen" >&2
  fi
}

echo "python3 in tmux"
run_tmux python3 python
# libedit keeps an entry per line of its file, its newlines and blanks encoded: a cell of two
# lines kept as one entry has both on one line.
ok "python3 (tmux): the history file keeps the loop as one entry" \
  grep -q "range(3):.*print('row'" "$scratch/state-tmux-python3/kbound/console_history"
assert_no_leftovers "after the python3 console in tmux"

echo "ir in tmux"
run_tmux ir r
ok "ir (tmux): the history file keeps the loop as one entry" \
  grep -q "0:2).*print(i" "$scratch/state-tmux-ir/kbound/console_history"
assert_no_leftovers "after the ir console in tmux"

echo "python3 through a pty"
run_pty python3 python
history="$scratch/state-python3/kbound/console_history"
ok "python3 (pty): the history is kept in \$XDG_STATE_HOME/kbound" grep -qF 'rint(6*7)' "$history"
ok "  ... readable by its owner only" [ "$(stat -c %a "$history")" = 600 ]
ok "  ... without the password typed at a password prompt" bash -c "! grep -q hunter2 '$history'"
assert_no_leftovers "after the python3 console"

echo "ir through a pty"
run_pty ir r
assert_no_leftovers "after the ir console"

echo "scripted: stdin is a here-doc"
set +e
"$KBOUND" console --kernel python3 --team scripted --transcript "$scratch/console.jsonl" \
  >"$scratch/out" 2>"$scratch/err" <<'CELLS'
x = 20
for i in range(2):
    x += 1

print("x is", x)
print("\x1b]0;title\x07\x1b[31mred\x1b[0m")
1/0
x * 2
CELLS
rc=$?
set -e
cat "$scratch/out"
ok "end of input exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "the banner names the team" grep -q "team: *scripted" "$scratch/out"
ok "the banner says the network is isolated" grep -q "network: *isolated" "$scratch/out"
ok "the banner names the host's root" grep -q "root: *the host's system paths" "$scratch/out"
ok "a multi-line block ran as one cell" grep -q "x is 22" "$scratch/out"
ok "terminal control sequences are removed" grep -qx "In \[[0-9]*\]: red" "$scratch/out"
ok "no ESC byte reaches the output" bash -c "! grep -q $'\x1b' '$scratch/out'"
# An escape sequence that never ends must not hide the rest of the output from the auditor.
printf '%s\n' 'print("seen\x1b]0;unterminated osc then-the-rest-is-shown")' 'print("csi\x1b[12;3")' |
  "$KBOUND" console --kernel python3 --team unterminated >"$scratch/unterm.out" 2>/dev/null
ok "text after an unterminated OSC is shown" grep -q "then-the-rest-is-shown" "$scratch/unterm.out"
ok "an unterminated CSI drops only its introducer" grep -q "csi12;3" "$scratch/unterm.out"
ok "no ESC byte reaches that output either" bash -c "! grep -q $'\x1b' '$scratch/unterm.out'"
ok "an error shows its traceback" grep -q "ZeroDivisionError" "$scratch/err"
ok "the namespace survives the error" grep -q "Out\[[0-9]*\]: 44" "$scratch/out"
# The transcript has every cell's request and reply, and the shutdown the end of input caused.
tr_count() { json_lines_count "$scratch/console.jsonl" "$1"; }
json_lines_count() {
  /usr/bin/python3 -c 'import json,sys
n=0
for line in open(sys.argv[1]):
    d=json.loads(line)
    n+= "%s %s %s" % (d["direction"], d["channel"], d["msg_type"]) == sys.argv[2]
print(n)' "$1" "$2"
}
ok "the transcript file is 0600" [ "$(stat -c %a "$scratch/console.jsonl")" = 600 ]
ok "the transcript has an execute_request per cell (5)" [ "$(tr_count "out shell execute_request")" -ge 5 ]
ok "the transcript has an execute_reply per request" \
  [ "$(tr_count "in shell execute_reply")" -eq "$(tr_count "out shell execute_request")" ]
ok "the transcript has the shutdown on end of input" [ "$(tr_count "in control shutdown_reply")" -eq 1 ]
assert_no_leftovers "after the scripted console"

echo "scripted: NUL bytes and an over-long line in the input, NUL bytes in the output"
# A NUL in an input line would cut the cell there: the line is refused (with the cell so far) and
# the session goes on. A line over 1 MiB is dropped whole, and the session goes on. A NUL in the
# kernel's output is shown as U+2400, so nothing after it is hidden.
{
  printf 'x = 1\0; print("after-nul")\n'
  printf 'print("out\\x00put"); import sys; sys.stderr.write("err\\x00tail\\n")\n'
  /usr/bin/python3 -c 'print("print(\"long-line-ran\"); s = \"" + "z" * (1100 * 1024) + "\"")'
  printf 'print("still here")\n'
  printf 'print(x)\n'
  printf 'raise ValueError("v\\x00w")\n'
} >"$scratch/nul.in"
set +e
"$KBOUND" console --kernel python3 --team nul <"$scratch/nul.in" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "NUL and long lines do not end the console (rc=$rc)" [ "$rc" -eq 0 ]
ok "the NUL line is refused, naming the byte" \
  grep -q "console: input line has a NUL byte (at byte 6): dropped, with the cell so far; nothing was sent" "$scratch/err"
ok "  ... and no part of it ran (x is undefined afterwards)" grep -q "NameError: name 'x' is not defined" "$scratch/err"
ok "  ... not even the part after the NUL" bash -c "! grep -q after-nul '$scratch/out'"
ok "the over-long line is dropped with a message" \
  grep -q "console: input line over 1048576 bytes: dropped, with the cell so far; nothing was sent" "$scratch/err"
ok "  ... and none of it ran" bash -c "! grep -q long-line-ran '$scratch/out'"
ok "  ... and the session went on" grep -q "still here" "$scratch/out"
ok "the stale errno message is gone" bash -c "! grep -q 'cannot read the input' '$scratch/err'"
ok "a NUL in stream output shows as U+2400, the rest is not hidden" grep -q "out␀put" "$scratch/out"
ok "  ... on stderr too" grep -q "err␀tail" "$scratch/err"
ok "  ... and in a traceback" grep -q "ValueError: v␀w" "$scratch/err"
ok "no NUL byte reaches the output" [ "$(tr -dc '\000' <"$scratch/out" | wc -c)" -eq 0 ]
assert_no_leftovers "after the NUL console"

echo "the raw-network override is in the banner"
out=$("$KBOUND" console --kernel python3 --allow-raw-network </dev/null)
ok "the banner says the network is NOT isolated" grep -q "network: *NOT isolated" <<<"$out"
ok "console --help exits 0" "$KBOUND" console --help

echo "--keep keeps the team folders"
"$KBOUND" console --kernel python3 --keep </dev/null >"$scratch/out" 2>"$scratch/err"
kept=$(sed -n 's/.*kept the team folders under \(.*\)/\1/p' "$scratch/err")
ok "the folders are kept ($kept)" test -d "$kept/teams/console/workspace"
rm -rf "$kept"

echo "the kernel dies"
set +e
(echo 'import os, threading; threading.Timer(1, lambda: os._exit(7)).start()'; sleep 8; echo 1+1) |
  "$KBOUND" console --kernel python3 >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "death at the prompt exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
ok "and says so with its exit status" grep -q "kernel 'python3' died (exit status 7)" "$scratch/err"
set +e
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n' |
  "$KBOUND" console --kernel python3 >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "death in a cell exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
ok "and names the signal" grep -q "kernel 'python3' died (exit status 137: killed by signal 9" "$scratch/err"
assert_no_leftovers "after the kernels died"

echo "usage"
set +e
"$KBOUND" console </dev/null >/dev/null 2>"$scratch/err"
rc=$?
"$KBOUND" console --kernel no-such-kernel </dev/null >/dev/null 2>"$scratch/err2"
rc2=$?
set -e
ok "--kernel is required (rc=$rc)" [ "$rc" -eq 2 ]
set +e
"$KBOUND" console --kernel python3 --team "../x" </dev/null >/dev/null 2>"$scratch/err3"
rc3=$?
set -e
ok "a bad team name is a usage error (rc=$rc3)" [ "$rc3" -eq 2 ]
ok "an unknown kernel exits 3 (rc=$rc2)" [ "$rc2" -eq 3 ]
ok "  ... naming it" grep -q "no-such-kernel" "$scratch/err2"

if [ "$(id -u)" -eq 0 ]; then
  export KBOUND_ROOTFS_CACHE=${KBOUND_ROOTFS_CACHE:-/var/cache/kbound-test-rootfs}
fi
image=$("$KBOUND_SOURCE_DIR/tests/fixtures/make-rootfs")
echo "console --rootfs"
out=$(printf 'print(open("/etc/kbound-image-marker").read().strip())\n' |
  "$KBOUND" console --rootfs "$image" --kernel python3)
ok "the banner names the image" grep -qF "root:       image $image, read-only" <<<"$out"
ok "the cell runs in the image" grep -qF "$(cat "$image/etc/kbound-image-marker")" <<<"$out"
assert_no_leftovers "after the rootfs console"
finish
