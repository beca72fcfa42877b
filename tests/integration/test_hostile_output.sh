#!/usr/bin/env bash
# Text a kernel sends to mislead whoever reads kbound's output (docs/faults.md, "Output nobody can
# forge"): terminal controls (a window title, the clipboard through OSC 52, a screen clear), a
# carriage return or newline that starts a forged "PASS" line, bidi overrides, and raw bytes that
# are not UTF-8. On a real pseudo-terminal `kbound run` shows none of the controls unless --raw;
# kbound's own message lines stay one line each whatever they quote (check, run, conformance); a
# kernel that dies with such a log still leaves a JSON report a strict UTF-8 parser reads.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

# on_pty OUT COMMAND...: runs COMMAND with stdout and stderr on a new pseudo-terminal; its bytes
# (as the terminal got them) go to OUT; rc is its exit status.
on_pty() {
  local out=$1
  shift
  set +e
  /usr/bin/python3 - "$out" "$@" <<'EOF'
import os, pty, sys
out, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
data = bytearray()
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
open(out, "wb").write(data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
EOF
  rc=$?
  set -e
}

# shows_no_controls FILE: no ESC, no C1 control, no bidi override or isolate, and no carriage
# return but the terminal's own before a newline (the pty turns "\n" into "\r\n").
shows_no_controls() {
  /usr/bin/python3 - "$1" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8", "replace")
bad = re.search("[\x1b\x07\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]|\r(?!\n)", text)
if bad:
    print("control %r at %d" % (bad.group(), bad.start()), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

# messages_one_line_each FILE: every line begins with "kbound: " (a message of kbound's own) and none of them
# quotes a kernel's text as a new line: no line begins with PASS (a forged verdict).
messages_one_line_each() {
  ! grep -avE '^kbound: ' "$1" | grep -q . && ! grep -aqE '^(PASS|FAIL)' "$1"
}

cell='import sys
forged = "hostile\nPASS         forged\rPASS: full boundary held\x1b]0;PWNED\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202eDESSAP"
print("before " + forged + " after")
sys.stdout.flush()
raise ValueError(forged)'

echo "kbound run on a real terminal: the cell's controls are not shown"
COLUMNS=1000 on_pty "$scratch/pty" "$KBOUND" run --kernel python3 "$cell"
ok "the cell raised: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
ok "the output is there, in order" grep -aq "before hostile" "$scratch/pty"
ok "no terminal control, carriage return or bidi override reached the terminal" shows_no_controls "$scratch/pty"
ok "the raised error is one message line, its newline shown as \\n" \
  grep -aqF 'kbound: kernel '"'"'python3'"'"': the cell raised ValueError: hostile\nPASS         forged\rPASS: full boundary held' "$scratch/pty"
ok "no line of the terminal begins with a forged PASS: full boundary" not grep -aqE '^PASS: full boundary' "$scratch/pty"

echo "kbound run --raw passes the bytes as sent"
on_pty "$scratch/pty-raw" "$KBOUND" run --raw --kernel python3 "$cell"
ok "--raw: the window title sequence is there" grep -aqF $'\x1b]0;PWNED\x07' "$scratch/pty-raw"
grep -a '^kbound: ' "$scratch/pty-raw" | tr -d '\r' >"$scratch/raw-messages" || true
ok "--raw: kbound's own message line is there and shows no control" \
  bash -c "grep -q 'the cell raised ValueError' '$scratch/raw-messages' && ! grep -aq \$'\x1b' '$scratch/raw-messages'"

echo "kernel_info full of forged lines: check's and conformance's progress lines stay one line each"
spec=$(hostile_spec forged forged-text)
set +e
"$KBOUND" check --verbose --kernel "$spec" "${bind[@]}" --timeout 120 --json "$scratch/forged.json" \
  >"$scratch/forged.out" 2>"$scratch/forged.err"
rc=$?
set -e
ok "check ran to a verdict (rc=$rc)" [ "$rc" -le 1 ]
ok "check: every stderr line is one message of kbound's" messages_one_line_each "$scratch/forged.err"
ok "check: stderr shows no terminal control" shows_no_controls "$scratch/forged.err"
ok "check: no stdout line a kernel started" \
  not grep -aqE '^PASS: full boundary held$|^PASS +forged +sandbox.backend +forged' "$scratch/forged.out"
ok "check: stdout shows no terminal control" shows_no_controls "$scratch/forged.out"
set +e
"$KBOUND" conformance --verbose --kernel "$spec" "${bind[@]}" --timeout 15 --json "$scratch/forged-c.json" \
  >"$scratch/forged-c.out" 2>"$scratch/forged-c.err"
rc=$?
set -e
ok "conformance ran to a verdict (rc=$rc)" [ "$rc" -le 1 ]
ok "conformance: the kernel's implementation is quoted" grep -aq "hostile" "$scratch/forged-c.err"
ok "conformance: every stderr line is one message of kbound's" messages_one_line_each "$scratch/forged-c.err"
ok "conformance: no terminal control on stderr" shows_no_controls "$scratch/forged-c.err"
ok "conformance: no terminal control on stdout" shows_no_controls "$scratch/forged-c.out"

echo "a kernel that dies at start-up with a log of raw bytes: the JSON report is still UTF-8 JSON"
spec=$(hostile_spec garbled garbled-death --exit-status 3)
set +e
"$KBOUND" check --kernel "$spec" "${bind[@]}" --timeout 60 --json "$scratch/garbled.json" \
  >"$scratch/garbled.out" 2>"$scratch/garbled.err"
rc=$?
set -e
ok "check: the kernel could not be checked (rc=$rc)" [ "$rc" -eq 3 ] || [ "$rc" -eq 1 ]
ok "the report parses as strict UTF-8 JSON" /usr/bin/python3 -c '
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
assert d["verdict"] == "fail", d["verdict"]
' "$scratch/garbled.json"
ok "the report quotes the log, its bad bytes replaced (U+FFFD)" /usr/bin/python3 -c '
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
assert "Traceback" in text and "\ufffd" in text, "no quote of the log"
' "$scratch/garbled.json"
ok "stderr: every line is one message of kbound's" messages_one_line_each "$scratch/garbled.err"
ok "stderr shows no terminal control" shows_no_controls "$scratch/garbled.err"
ok "stdout shows no terminal control" shows_no_controls "$scratch/garbled.out"
assert_no_leftovers "after the forged-text runs"
finish
