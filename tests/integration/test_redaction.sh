#!/usr/bin/env bash
# Secrets never reach output: the connection key a kernel can read from its own connection file,
# and the canaries, appear nowhere (stdout, stderr, JSON, JUnit, transcript) whichever way a kernel
# shows them: its log at start-up, kernel_info, cell output whole, in halves, upper-cased, and every
# other reply (the fixture answers each request at once, key included: conformance used to wait out
# eleven requests it left unanswered, 110 of this file's 118 s). Terminal escapes from a kernel
# never reach stderr raw. Transcript files that cannot be made private are refused. (The review's
# repros A and B, finding 2 and 3.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

# no_secret SECRET FILE: FILE exists and holds no 12-byte fragment of SECRET (start, middle, end),
# in any letter case.
no_secret() {
  local secret=$1 file=$2 off
  [ -e "$file" ] && [ ${#secret} -ge 24 ] || return 1
  for off in 0 $((${#secret} / 2 - 6)) $((${#secret} - 12)); do
    if grep -qiF -- "${secret:$off:12}" "$file"; then
      echo "    | ${file##*/} holds a fragment of the secret at offset $off" >&2
      return 1
    fi
  done
}

# assert_clean LABEL SECRET FILES...: one assertion per file.
assert_clean() {
  local label=$1 secret=$2
  shift 2
  for f in "$@"; do
    ok "$label: no trace of the secret in ${f##*/}" no_secret "$secret" "$f"
  done
}

# kept_key: the connection key of the (only) kernel kept under the runtime dir. kbound removes the
# connection file once the kernel is ready, so the key comes from what the kernel kept: the
# leak-key fixture logs it (host/kernel.log), the ipykernel cells below save it in the workspace.
kept_key() {
  local saved log
  saved=$(find "$KBOUND_RUNTIME_DIR" -path '*/workspace/key.txt' | head -1)
  log=$(find "$KBOUND_RUNTIME_DIR" -path '*/host/kernel.log' | head -1)
  if [ -n "$saved" ]; then
    cat "$saved"
  elif [ -n "$log" ]; then
    sed -n 's/^hostile-kernel: my key is \([0-9a-f-]*\)$/\1/p' "$log" | head -1
  else
    return 1
  fi
}
drop_kept() {
  rm -rf "${KBOUND_RUNTIME_DIR:?}"/kbound-*
}

no_escape() {
  [ -e "$1" ] && ! grep -q $'\x1b' "$1" && ! grep -q $'\x07' "$1"
}

echo "repro A: a kernel that prints its key (whole, in halves, upper-cased) and escapes, then exits"
# One line, so that both diagnoses quote it: the log tail (the kernel died after the sandbox was
# pinned) and the sandbox's last log line (it died before).
k2="$scratch/kernels/keylog"
mkdir -p "$k2"
cat >"$k2/kernel.json" <<'EOF'
{"argv": ["/bin/sh", "-c", "k=$(sed -n 's/.*\"key\": \"\\(.*\\)\".*/\\1/p' \"$0\"); printf 'KEY=%s A=%s B=%s U=%s boom \\033]0;PWNED\\007\\033[2J\\n' $k $(echo $k | cut -c1-32) $(echo $k | cut -c33-64) $(echo $k | tr a-f A-F) >&2; exit 3", "{connection_file}"],
 "display_name": "keylog", "language": "python"}
EOF
timed keylog-check "$KBOUND" check --kernel "$k2" --json "$scratch/keylog.json" --junit "$scratch/keylog.xml"
ok "keylog check: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
for f in keylog-check.out keylog-check.err keylog.json keylog.xml; do
  ok "keylog check: $f shows the log with the key redacted" grep -q 'KEY=\[redacted:connection-key\]' "$scratch/$f"
  ok "keylog check: $f shows no key, half or upper-cased key" \
    bash -c '! grep -Eq "(KEY|A|B|U)=[0-9a-fA-F]{4}" "$1"' _ "$scratch/$f"
done
ok "keylog check: no terminal escape on stderr" no_escape "$scratch/keylog-check.err"
timed keylog-run "$KBOUND" run --kernel "$k2" 'print(1)'
ok "keylog run: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
ok "keylog run: the log is shown, key redacted" grep -q 'KEY=\[redacted:connection-key\] A=\[redacted:connection-key\] B=\[redacted:connection-key\] U=\[redacted:connection-key\] boom' "$scratch/keylog-run.err"
ok "keylog run: no terminal escape on stderr" no_escape "$scratch/keylog-run.err"
assert_no_leftovers "after the key-printing start-up failures"

echo "repro B: hostile kernel with the key in kernel_info, its log, every cell's output and every other reply"
spec=$(hostile_spec leakkey leak-key)
timed leak-check "$KBOUND" check --kernel "$spec" "${bind[@]}" --keep --timeout 120 \
  --json "$scratch/leak.json" --junit "$scratch/leak.xml" --transcript "$scratch/leak.jsonl"
key=$(kept_key || true)
drop_kept
ok "leak-key check: a key was captured" [ ${#key} -eq 64 ]
ok "leak-key check: passes (the leak is the kernel's own key, not a boundary) (rc=$rc)" [ "$rc" -eq 0 ]
ok "leak-key check: kernel_info.implementation is redacted in the JSON" \
  [ "$(json_get "$scratch/leak.json" "d['kernels'][0]['kernel_info']['implementation']")" = "[redacted:connection-key]" ]
ok "leak-key check: the transcript shows the halves redacted" grep -q 'LEAK1=\[redacted:connection-key\]' "$scratch/leak.jsonl"
assert_clean "leak-key check" "$key" "$scratch"/leak-check.out "$scratch"/leak-check.err "$scratch"/leak.json \
  "$scratch"/leak.xml "$scratch"/leak.jsonl
ok "leak-key check: no terminal escape on stderr" no_escape "$scratch/leak-check.err"

timed leak-conf "$KBOUND" conformance --kernel "$spec" "${bind[@]}" --keep --timeout 120 \
  --json "$scratch/leakc.json" --transcript "$scratch/leakc.jsonl"
key=$(kept_key || true)
drop_kept
ok "leak-key conformance: a key was captured and the run ended (rc=$rc)" [ ${#key} -eq 64 ] && [ "$rc" -le 1 ]
assert_clean "leak-key conformance" "$key" "$scratch"/leak-conf.out "$scratch"/leak-conf.err "$scratch"/leakc.json \
  "$scratch"/leakc.jsonl
ok "leak-key conformance: no terminal escape on stderr" no_escape "$scratch/leak-conf.err"
assert_no_leftovers "after the leak-key kernel"

echo "finding 3: a real ipykernel cell prints its own key whole, in halves, upper-cased and the file"
# The connection file is gone once the kernel is ready: the key comes from the kernel's memory, the
# cell saves it for kept_key and writes it in a connection file's shape.
cell='import json,sys; k=get_ipython().kernel.session.key.decode(); open("/workspace/key.txt","w").write(k); print(k); sys.stdout.write(k[:20]); sys.stdout.flush(); sys.stdout.write(k[20:]+"\n"); print(k.upper()); sys.stderr.write(json.dumps({"key": k}))'
timed run-key "$KBOUND" run --kernel python3 --keep --transcript "$scratch/run.jsonl" "$cell"
key=$(kept_key || true)
drop_kept
ok "run: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "run: a key was captured" [ ${#key} -eq 64 ]
ok "run: stdout shows the markers instead" [ "$(grep -c '^\[redacted:connection-key\]$' "$scratch/run-key.out")" -eq 3 ]
ok "run: stderr shows the connection file with the key redacted" \
  grep -q '"key": "\[redacted:connection-key\]"' "$scratch/run-key.err"
assert_clean "run" "$key" "$scratch"/run-key.out "$scratch"/run-key.err "$scratch"/run.jsonl

# Then `k?`: what inspect_request says of the key (IPython's "String form") is the kernel's text too.
timed console-key "$KBOUND" console --kernel python3 --keep --transcript "$scratch/console.jsonl" <<<"$cell
k?"
key=$(kept_key || true)
drop_kept
ok "console: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "console: a key was captured" [ ${#key} -eq 64 ]
ok "console: stdout shows a marker" grep -q 'redacted:connection-key' "$scratch/console-key.out"
ok "console: k? shows the key's string form redacted" \
  grep -q 'String form: *\[redacted:connection-key\]' "$scratch/console-key.out"
assert_clean "console" "$key" "$scratch"/console-key.out "$scratch"/console-key.err "$scratch"/console.jsonl
assert_no_leftovers "after the key-printing cells"

echo "finding 2: another team's canary read through a leaky sandbox stays out of every report"
timed leak-team "$KBOUND" check --kernel python3 --bwrap "$(leaky_bwrap team)" --keep \
  --json "$scratch/team.json" --junit "$scratch/team.xml" --transcript "$scratch/team.jsonl"
sib=$(cat "$KBOUND_RUNTIME_DIR"/kbound-*/teams/*-sibling/workspace/canary.txt 2>/dev/null || true)
drop_kept
ok "LEAK=team: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
ok "LEAK=team: the canary was captured" [ ${#sib} -eq 64 ]
ok "LEAK=team: cross_team fails" [ "$(check_status "$scratch/team.json" python3 boundary.cross_team)" = fail ]
ok "LEAK=team: the evidence says the content was read, without it" \
  [ "$(json_get "$scratch/team.json" "[e.get('content_read') for k in d['kernels'] for c in k['checks'] if c['id']=='boundary.cross_team' for e in c['evidence']['cell'] if 'content' not in e]")" = "[True, True]" ]
assert_clean "LEAK=team" "$sib" "$scratch"/leak-team.out "$scratch"/leak-team.err "$scratch"/team.json \
  "$scratch"/team.xml "$scratch"/team.jsonl
assert_no_leftovers "after the leaky team sandbox"

echo "finding 8: a transcript file that cannot be made private is refused and left alone"
if [ "$(id -u)" -eq 0 ]; then
  echo "theirs" >"$scratch/foreign.jsonl"
  chown "$(test_user)" "$scratch/foreign.jsonl"
  timed foreign "$KBOUND" run --kernel python3 --transcript "$scratch/foreign.jsonl" 'print(1)'
  ok "another user's file: exit 2 (rc=$rc)" [ "$rc" -eq 2 ]
  ok "another user's file: the error says why" grep -q "belongs to another user" "$scratch/foreign.err"
  ok "another user's file: untouched" [ "$(cat "$scratch/foreign.jsonl")" = theirs ]
else
  fail "another user's file: not tested: making a file of another user needs root (run the tests as root, as CI does)"
fi
echo "mine" >"$scratch/linked.jsonl"
ln "$scratch/linked.jsonl" "$scratch/second-name"
timed linked "$KBOUND" run --kernel python3 --transcript "$scratch/linked.jsonl" 'print(1)'
ok "a file with a second hard link: exit 2 (rc=$rc)" [ "$rc" -eq 2 ]
ok "a file with a second hard link: untouched" [ "$(cat "$scratch/second-name")" = mine ]
assert_no_leftovers "after the refused transcripts"
finish
