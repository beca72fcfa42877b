#!/usr/bin/env bash
# What a pack writer meets (docs/probes-cells.md, "What a pack writer meets"), each shown with the
# mistake made and the failure's words naming it: a metakernel kernel that sends a line's end only
# with the next output (a pack that does not print an empty line after the probe's child marker),
# a cell that runs in a child of the kernel and reports its own pid, and a kernel that ignores the
# connection file's transport. (The parameters' "\/" is held by test_pack_render.) Real kernels: the
# metakernel bash fixture, and ipykernel made to bind TCP.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3
if ! /usr/bin/python3 -c 'import metakernel' 2>/dev/null; then
  echo "FATAL: python3-metakernel is required by this test; run scripts/setup (apt-get install python3-metakernel)" >&2
  exit 1
fi

bashk="$fixtures/bash-kernel"
dir="$scratch/kernels/bashk"
mkdir -p "$dir"
/usr/bin/python3 - "$dir/kernel.json" "$bashk/kbound_bash_kernel.py" <<'PY'
import json, sys
json.dump({"argv": ["/usr/bin/python3", sys.argv[2], "-f", "{connection_file}"],
           "display_name": "bash (kbound fixture)", "language": "bash", "interrupt_mode": "signal"},
          open(sys.argv[1], "w"))
PY

echo "a bash pack with two mistakes: no empty line after the relayed lines, and the shell's own pid"
mkdir -p "$scratch/packs"
cp -r "$KBOUND_SOURCE_DIR/kernels/bash" "$scratch/packs/bash"
/usr/bin/python3 - "$scratch/packs/bash/lib.sh" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
relay = "while IFS= read -r line; do printf '%s\\n\\n' \"$line\"; done"
assert relay in s, "the bash pack's relay changed: update this test"
s = s.replace(relay, "while IFS= read -r line; do printf '%s\\n' \"$line\"; done")
ident = 'st=$(head -c 65536 "/proc/$PPID/status" 2>/dev/null)'
assert ident in s and '_kb_result "{\\"pid\\":$PPID,' in s, "the bash pack's identity changed: update this test"
s = s.replace(ident, 'st=$(head -c 65536 "/proc/$$/status" 2>/dev/null)')
s = s.replace('_kb_result "{\\"pid\\":$PPID,', '_kb_result "{\\"pid\\":$$,', 1)
open(p, "w").write(s)
PY
set +e
"$KBOUND" check --kernel "$dir" --ro-bind "$bashk" --kernels-dir "$scratch/packs" --json "$scratch/bad.json" \
  >"$scratch/bad.out" 2>"$scratch/bad.err"
rc=$?
set -e
ok "the check fails (rc=$rc)" [ "$rc" -eq 1 ]
detail() { json_get "$scratch/bad.json" "next(c['detail'] for c in d['kernels'][0]['checks'] if c['id']=='$1')"; }
json_read cred "$scratch/bad.json" "next(c['status'] for c in d['kernels'][0]['checks'] if c['id']=='boundary.credentials')"
ok "boundary.credentials fails ($cred)" [ "$cred" = fail ]
ok "  ... saying the child marker came without its line end, and the fix" \
  grep -qF "the cell's child marker line came without its line end, which the kernel sent only with later output" \
  <<<"$(detail boundary.credentials)"
ok "  ... naming metakernel and the empty line" \
  grep -qF "print an empty line after every line the host waits for" <<<"$(detail boundary.credentials)"
json_read pid2 "$scratch/bad.json" "next(c['status'] for c in d['kernels'][0]['checks'] if c['id']=='identity.pid2')"
ok "identity.pid2 fails ($pid2)" [ "$pid2" = fail ]
ok "  ... saying the kernel is the child's parent" \
  grep -qF "a cell that runs in a child of the kernel (a shell, octave-cli) reports the kernel process, its parent" \
  <<<"$(detail identity.pid2)"
assert_no_leftovers "after the bash pack with mistakes"

echo "the same pack, right (kbound's own), passes both"
set +e
"$KBOUND" check --kernel "$dir" --ro-bind "$bashk" --json "$scratch/good.json" --transcript "$scratch/good.jsonl" \
  >"$scratch/good.out" 2>"$scratch/good.err"
rc=$?
set -e
ok "kbound's bash pack: the check passes (rc=$rc)" [ "$rc" -eq 0 ]
if [ "$rc" -ne 0 ]; then
  # What the kernel said and when (met once in twenty runs beside two spinners: metakernel's
  # SIGINT relay did not stop the long cell), to read the cause from this run's output alone.
  print_transcript "$scratch/good.jsonl"
fi
ok "  ... boundary.credentials and identity.pid2 pass" [ "$(json_get "$scratch/good.json" \
  "sorted({c['status'] for c in d['kernels'][0]['checks'] if c['id'] in ('boundary.credentials', 'identity.pid2')})")" = "['pass']" ]
assert_no_leftovers "after kbound's bash pack"

echo "a kernel that binds TCP whatever its connection file says"
mkdir -p "$scratch/kernels/tcpk"
cat >"$scratch/kernels/tcpk/tcp_kernel.py" <<'PY'
# ipykernel told to use TCP on loopback, whatever transport its connection file names (as
# IJavascript does): its ipc socket files never appear.
import json, sys
conn = json.load(open(sys.argv[1]))
conn["transport"], conn["ip"] = "tcp", "127.0.0.1"
for key in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"):
    conn[key] = 0  # any free port (the file's are ipc's small numbers)
mine = "/tmp/tcp-connection.json"
json.dump(conn, open(mine, "w"))
from ipykernel import kernelapp
kernelapp.launch_new_instance(argv=["-f", mine])
PY
/usr/bin/python3 - "$scratch/kernels/tcpk/kernel.json" "$scratch/kernels/tcpk/tcp_kernel.py" <<'PY'
import json, sys
json.dump({"argv": ["/usr/bin/python3", sys.argv[2], "{connection_file}"], "display_name": "tcp",
           "language": "python"}, open(sys.argv[1], "w"))
PY
chmod -R a+rX "$scratch/kernels"
words="it made none of its ipc sockets: a kernel that speaks only TCP says so in its kernelspec's metadata, {\"kbound\": {\"transport\": \"tcp\"}}"
set +e
# kbound's seccomp filter refuses TCP sockets: the kernel dies binding one.
"$KBOUND" run --kernel "$scratch/kernels/tcpk" --ro-bind "$scratch/kernels/tcpk" --timeout 8 'print(1)' \
  >"$scratch/tcp.out" 2>"$scratch/tcp.err"
rc=$?
# With TCP allowed (--sockets inet) it binds, and kbound, on the ipc sockets, never hears it
# (declared in its metadata, kbound would relay to it: test_tcp_kernel).
"$KBOUND" run --kernel "$scratch/kernels/tcpk" --ro-bind "$scratch/kernels/tcpk" --sockets inet --timeout 8 \
  'print(1)' >"$scratch/tcp2.out" 2>"$scratch/tcp2.err"
rc2=$?
set -e
ok "it dies at start-up: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... and the error says it made none of its ipc sockets, and how a TCP kernel says so" grep -qF "$words" "$scratch/tcp.err"
ok "with TCP allowed it never becomes ready: exit 3 (rc=$rc2)" [ "$rc2" -eq 3 ]
ok "  ... a start-up timeout" grep -qF "did not answer kernel_info in time" "$scratch/tcp2.err"
ok "  ... saying the same" grep -qF "$words" "$scratch/tcp2.err"
ok "a kernel that honours it is never told so (the bash kernel above)" \
  not grep -q "made none of its ipc sockets" "$scratch/good.err" "$scratch/bad.err"
assert_no_leftovers "after the TCP kernel"
finish
