#!/usr/bin/env bash
# --help of every command and doctor's items fit where they are read (issue 39, item 2): no line
# wider than 80 columns in a pipe (a CI log), none wider than the terminal on a terminal (a pty of
# 60 columns here), and the same words either way: the text is flowed again, never cut.
source "$(dirname "$0")/lib.sh"
require /usr/bin/python3

# at_width COLS FILE -- COMMAND...: COMMAND's output on a pty of COLS columns into FILE (as a
# terminal shows it: the pty's \r\n made \n); its exit code is COMMAND's.
at_width() {
  local cols=$1 file=$2
  shift 3
  /usr/bin/python3 - "$cols" "$file" "$@" <<'PY'
import fcntl, os, pty, struct, sys, termios
cols, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
go_r, go_w = os.pipe()
pid, fd = pty.fork()
if pid == 0:
    # Runs the command only once the terminal has its size.
    os.close(go_w)
    os.read(go_r, 1)
    os.environ.pop("COLUMNS", None)
    os.execvp(argv[0], argv)
os.close(go_r)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
os.write(go_w, b"x")
os.close(go_w)
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
open(path, "wb").write(out.replace(b"\r\n", b"\n"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
}
# widest FILE: the widest line's columns (characters: kbound's help is text, its arrows one column).
widest() { /usr/bin/python3 -c 'import sys; print(max((len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")), default=0))' "$1"; }
# same_text A B: A and B hold the same text but for where lines break (a word wider than the line,
# OPENAI4S_KERNEL_ALLOW_RAW_NETWORK=1 at 60 columns, is broken too).
same_text() { [ "$(tr -d ' \n' <"$1")" = "$(tr -d ' \n' <"$2")" ]; }

for cmd in "" check audit conformance run console doctor kernelspecs; do
  label="kbound${cmd:+ $cmd} --help"
  # shellcheck disable=SC2086
  "$KBOUND" $cmd --help >"$scratch/pipe.txt" 2>&1
  ok "$label in a pipe: no line over 80 columns (widest $(widest "$scratch/pipe.txt"))" \
    [ "$(widest "$scratch/pipe.txt")" -le 80 ]
  # shellcheck disable=SC2086
  at_width 60 "$scratch/tty.txt" -- "$KBOUND" $cmd --help
  ok "$label on a terminal of 60 columns: no line over 60 (widest $(widest "$scratch/tty.txt"))" \
    [ "$(widest "$scratch/tty.txt")" -le 60 ]
  ok "  ... the same words as in the pipe (flowed again, nothing cut)" same_text "$scratch/pipe.txt" "$scratch/tty.txt"
  ok "  ... and wrapped there: some line is wider than 60 in the pipe" [ "$(widest "$scratch/pipe.txt")" -gt 60 ]
done

at_width 120 "$scratch/wide.txt" -- "$KBOUND" check --help
ok "check --help on a terminal of 120 columns uses its width (a line over 80: $(widest "$scratch/wide.txt"))" \
  [ "$(widest "$scratch/wide.txt")" -gt 80 ]

echo "doctor's items"
set +e
"$KBOUND" doctor >"$scratch/doctor-pipe.txt" 2>&1
at_width 60 "$scratch/doctor-tty.txt" -- "$KBOUND" doctor
set -e
ok "doctor in a pipe: no line over 80 columns (widest $(widest "$scratch/doctor-pipe.txt"))" \
  [ "$(widest "$scratch/doctor-pipe.txt")" -le 80 ]
ok "doctor on a terminal of 60 columns: no line over 60 (widest $(widest "$scratch/doctor-tty.txt"))" \
  [ "$(widest "$scratch/doctor-tty.txt")" -le 60 ]
ok "  ... an item's further lines are indented under its words" grep -qE '^       [^ ]' "$scratch/doctor-tty.txt"
ok "  ... as many items as in the pipe" \
  [ "$(unwrapped "$scratch/doctor-tty.txt" | grep -c '^\[')" -eq "$(unwrapped "$scratch/doctor-pipe.txt" | grep -c '^\[')" ]
ok "  ... and no word of an item lost (one read whole, unwrapped)" \
  grep -q "^\[ OK \] sandbox-user: .* never as root$" <(unwrapped "$scratch/doctor-tty.txt")
assert_no_leftovers "after doctor"
finish
