#!/usr/bin/env bash
# Kernels that speak only TCP (issue 36, item 3; docs/transports.md): a kernel that binds
# tcp://IP:PORT whatever its connection file says dies on kbound's ipc file, and its error line is
# quoted with the way out; told so by its kernelspec's metadata (or --transport tcp), it gets a tcp
# file on the sandbox's own loopback and kbound reaches it through its relay, and every check is
# judged: identity.pid2 follows each connection through the relay. The kernels: ipykernel made
# TCP-only by the tests (it binds what IJavascript binds: "tcp://" + the file's ip), python3 and ir
# with --transport tcp, on bwrap 0.8.0, on 0.4.1 (kbound's stand-ins and the relay together) and
# unprivileged on 0.6.1; and IJavascript from the npm registry (tests/fixtures/get-ijavascript),
# which has no language pack: every check the host carries alone is judged.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R node npm flock runuser

user=$(test_user)
chmod 1777 "$KBOUND_RUNTIME_DIR"
mkdir -m 1777 "$scratch/reports"
as_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 \
      KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$@"
  else
    "$@"
  fi
}

# kernelspec NAME METADATA: a TCP-only ipykernel (the connection file's transport made tcp, its ip
# kept, as IJavascript does), with METADATA as its kernel.json's "metadata".
kernelspec() {
  mkdir -p "$scratch/kernels/$1"
  cat >"$scratch/kernels/$1/kernel.json" <<JSON
{"argv": ["/usr/bin/python3", "-c", "import json, os, sys; c = json.load(open(sys.argv[1])); c['transport'] = 'tcp'; f = '/tmp/tcp-only-connection.json'; json.dump(c, open(f, 'w')); os.execv(sys.executable, [sys.executable, '-m', 'ipykernel_launcher', '-f', f])", "{connection_file}"],
 "display_name": "Python 3, TCP only", "language": "python", "metadata": $2}
JSON
  chmod -R a+rX "$scratch/kernels"
}
kernelspec tcp-unsaid '{}'
kernelspec tcp-only '{"kbound": {"transport": "tcp"}}'

run_check() { # run_check REPORT ARGS...: kbound check's exit code
  local report=$1
  shift
  set +e
  "$KBOUND" check --json "$report" "$@" >"$scratch/check.out" 2>"$scratch/check.err"
  local rc=$?
  set -e
  echo "$rc"
}
relayed() { # relayed REPORT KERNEL: identity.pid2 passed through kbound's relay
  [ "$(check_status "$1" "$2" identity.pid2)" = pass ] &&
    grep -qF "5 of them through kbound's relay" <<<"$(json_get "$1" "next(c['detail'] for k in d['kernels'] if k['name'] == '$2' for c in k['checks'] if c['id'] == 'identity.pid2')")"
}
all_pass() { # all_pass REPORT: every check of every kernel passed (or is an explained unsupported)
  [ "$(json_get "$1" "sorted({c['status'] for k in d['kernels'] for c in k['checks']} - {'pass', 'unsupported'})")" = "[]" ]
}

# Told nothing, the kernel dies on kbound's ipc file: exit 3, its error line and the way out named.
rc=$(run_check "$scratch/unsaid.json" --kernel "$scratch/kernels/tcp-unsaid")
ok "a kernel that binds TCP, not said: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... its log's error line quoted, not only the stack's last frames" \
  grep -qF "its log's error line: zmq.error.ZMQError: No such device" "$scratch/check.err"
ok "  ... and the kernelspec metadata that says it speaks TCP named" \
  grep -qF "it made none of its ipc sockets: a kernel that speaks only TCP says so in its kernelspec's metadata, {\"kbound\": {\"transport\": \"tcp\"}}" "$scratch/check.err"

# Said in its kernelspec: every check passes, the connections followed through the relay.
rc=$(run_check "$scratch/tcp.json" --kernel "$scratch/kernels/tcp-only")
[ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -5 "$scratch/check.err"; }
ok "the TCP-only kernel, said in its kernelspec: check passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "  ... every check judged and passed" all_pass "$scratch/tcp.json"
ok "  ... identity.pid2 followed kbound's 5 connections through the relay" relayed "$scratch/tcp.json" tcp-only
ok "  ... IP sockets allowed for it, and reported not claimed" \
  grep -qE "^PASS +tcp-only +sandbox.attack_surface .*NOT claimed: AF_INET, AF_INET6" "$scratch/check.out"
ok "  ... its network still only its own loopback" [ "$(check_status "$scratch/tcp.json" tcp-only boundary.network)" = pass ]

# --transport tcp: any kernel over TCP, python3 and ir among them.
rc=$(run_check "$scratch/transport.json" --transport tcp --kernel python3 --kernel ir)
[ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -5 "$scratch/check.err"; }
ok "--transport tcp: python3 and ir pass (rc=$rc)" [ "$rc" -eq 0 ]
ok "  ... python3 through the relay" relayed "$scratch/transport.json" python3
ok "  ... ir through the relay" relayed "$scratch/transport.json" ir
set +e
"$KBOUND" check --transport udp --kernel python3 >/dev/null 2>"$scratch/usage.err"
rc=$?
set -e
ok "--transport udp is a usage error (rc=$rc)" [ "$rc" -eq 2 ]

# The relay with kbound's stand-ins for --size and --disable-userns (0.4.1), and unprivileged on
# 0.6.1.
b041=$(get_bwrap 0.4.1)
rc=$(run_check "$scratch/tcp-041.json" --bwrap "$b041" --kernel "$scratch/kernels/tcp-only")
[ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -5 "$scratch/check.err"; }
ok "bubblewrap 0.4.1: the TCP-only kernel passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "  ... through the relay" relayed "$scratch/tcp-041.json" tcp-only
b061=$(get_bwrap 0.6.1)
set +e
as_user "$(user_kbound)" check --bwrap "$b061" --kernel "$scratch/kernels/tcp-only" \
  --json "$scratch/reports/u-tcp.json" >"$scratch/check.out" 2>"$scratch/check.err"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -5 "$scratch/check.err"; }
ok "bubblewrap 0.6.1 as $user: the TCP-only kernel passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "  ... through the relay" relayed "$scratch/reports/u-tcp.json" tcp-only
assert_no_leftovers "after the TCP-only ipykernel"

# IJavascript, from the npm registry: no language pack, so the checks that need a cell are
# untested (exit 1, never 3); every check the host carries alone is judged, and passes:
# lifecycle.shutdown late, since IJavascript 5.2.1 does not exit on shutdown_request (control below:
# nor outside any sandbox, over plain TCP) and ends on the SIGTERM a kernel manager sends.
ijs=$("$fixtures/get-ijavascript") ||
  { echo "FATAL: cannot install IJavascript (tests/fixtures/get-ijavascript: node, npm and the npm registry)" >&2; exit 1; }
ijs_dir=$(dirname "$ijs")
rc=$(run_check "$scratch/ijs.json" --kernel "$ijs" --ro-bind "$ijs_dir")
ok "IJavascript: judged, not refused (rc=$rc, 1: cells untested without a pack)" [ "$rc" -eq 1 ]
ok "  ... identity.pid2 through the relay" relayed "$scratch/ijs.json" javascript
for id in $(listed_check_ids host); do
  ok "  ... $id: pass" [ "$(check_status "$scratch/ijs.json" javascript "$id")" = "pass" ]
done
ok "  ... lifecycle.shutdown: answered, did not exit on its own, ended by a kernel manager's SIGTERM" \
  grep -qE "did not exit on its own: still running 15000 ms after the reply.*ended on the SIGTERM a kernel manager sends" \
  <<<"$(json_get "$scratch/ijs.json" "[c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='lifecycle.shutdown'][0]")"
ok "control: IJavascript outside any sandbox, over TCP, is sent shutdown_request and keeps running" \
  /usr/bin/python3 - "$ijs/kernel.json" "$scratch/ijs-connection.json" <<'PY'
import json, subprocess, sys, time
from jupyter_client import BlockingKernelClient
spec, conn = json.load(open(sys.argv[1])), sys.argv[2]
json.dump({"transport": "tcp", "ip": "127.0.0.1", "shell_port": 19301, "iopub_port": 19302,
           "stdin_port": 19303, "control_port": 19304, "hb_port": 19305, "key": "k",
           "signature_scheme": "hmac-sha256"}, open(conn, "w"))
p = subprocess.Popen([a.replace("{connection_file}", conn) for a in spec["argv"]])
try:
    c = BlockingKernelClient()
    c.load_connection_file(conn)
    c.start_channels()
    c.wait_for_ready(timeout=30)
    c.shutdown()
    time.sleep(5)
    sys.exit(0 if p.poll() is None else 1)
finally:
    p.kill()
    p.wait()
PY
assert_no_leftovers "after IJavascript"
finish
