#!/usr/bin/env bash
# kbound run: one cell in a real kernel, unsandboxed (protocol path) and sandboxed (PID 2, lo only,
# no daemon secret), with the exit codes users script against.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R

echo "run --sandbox off"
out=$("$KBOUND" run --kernel python3 --sandbox off 'print(6*7)')
ok "python3 prints 42" [ "$out" = "42" ]
out=$("$KBOUND" run --kernel ir --sandbox off 'cat(6*7)')
ok "ir prints 42" [ "$out" = "42" ]
set +e
"$KBOUND" run --kernel python3 --sandbox off '1/0' >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "a raising cell exits 1" [ "$rc" -eq 1 ]
ok "stderr names the error" grep -q "ZeroDivisionError" "$scratch/err"
ok "stderr names the kernel" grep -q "kernel 'python3'" "$scratch/err"
set +e
"$KBOUND" run --kernel no-such-kernel 'x' 2>"$scratch/err"
rc=$?
set -e
ok "an unknown kernel exits 3" [ "$rc" -eq 3 ]
ok "and says which" grep -q "no-such-kernel" "$scratch/err"
out=$("$KBOUND" run --kernel python3 --sandbox off 'from IPython.display import display; display(3+4)')
ok "display_data text/plain is printed" [ "$out" = "7" ]

echo "a NUL byte in the output does not hide the rest"
# A NUL would end the text for anything reading it as a C string; run shows it as U+2400 instead.
"$KBOUND" run --kernel python3 --sandbox off 'import sys
from IPython.display import display
print("before\x00after")
display({"text/plain": "shown\x00too"}, raw=True)
sys.stderr.write("err\x00tail\n")' >"$scratch/nul.out" 2>"$scratch/nul.err"
ok "stream stdout past a NUL is printed" grep -qx "before␀after" "$scratch/nul.out"
ok "text/plain past a NUL is printed" grep -qx "shown␀too" "$scratch/nul.out"
ok "stream stderr past a NUL is printed" grep -qx "err␀tail" "$scratch/nul.err"
ok "no NUL byte reaches stdout" [ "$(tr -dc '\000' <"$scratch/nul.out" | wc -c)" -eq 0 ]

echo "rich output past the per-execution cap (32 MiB) is cut, and the run fails saying so"
set +e
"$KBOUND" run --kernel python3 --sandbox off 'from IPython.display import display
for i in range(10): display({"text/plain": "x" * (4 << 20)}, raw=True)' >"$scratch/rich.out" 2>"$scratch/rich.err"
rc=$?
set -e
ok "40 MiB of display_data exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
ok "  ... naming the limit" grep -q "the cell's rich output went past kbound's 32 MiB limit and the rest was dropped" "$scratch/rich.err"
rich_lines=$(wc -l <"$scratch/rich.out")
ok "  ... after printing what fit (7 of 10 outputs, got $rich_lines)" [ "$rich_lines" -eq 7 ]

echo "run in the sandbox"
out=$("$KBOUND" run --kernel python3 'import os; print(os.getpid())')
ok "python3 is PID 2" [ "$out" = "2" ]
out=$("$KBOUND" run --kernel ir 'cat(Sys.getpid())')
ok "ir is PID 2" [ "$out" = "2" ]
out=$("$KBOUND" run --kernel python3 'import socket; print(",".join(n for _, n in socket.if_nameindex()))')
ok "only lo inside (got '$out')" [ "$out" = "lo" ]

secret="kbound-test-secret-$RANDOM$RANDOM$RANDOM"
code='import os, glob, subprocess, sys
hits = []
sub = subprocess.run([sys.executable, "-c", "import os; print(repr(dict(os.environ)))"], capture_output=True, text=True).stdout
for path in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
    try:
        data = open(path, "rb").read().replace(b"\0", b"\n").decode(errors="replace")
    except OSError:
        continue
    hits.append(data)
hits.append(repr(dict(os.environ)))
hits.append(sub)
print("\n".join(hits))'
KBOUND_TEST_SECRET="$secret" "$KBOUND" run --kernel python3 "$code" >"$scratch/dump"
ok "the cell read /proc (sanity: it sees its own argv)" grep -q "ipykernel_launcher" "$scratch/dump"
ok "a secret in kbound's environment is nowhere in the sandbox" bash -c "! grep -q '$secret' '$scratch/dump'"

assert_no_leftovers "after run"
finish
