#!/usr/bin/env bash
# Every output path kbound writes (--json, --junit of check and conformance, standard output): a
# regular file or a new path is replaced atomically; a device or a FIFO is written in place and
# never replaced; "-" is standard output (the summary then goes to standard error); a directory, an
# unwritable path or two outputs naming one file are usage errors before any kernel starts; a
# failed write names the path and its real errno.
source "$(dirname "$0")/lib.sh"
require bwrap mkfifo

# run_check LABEL ARGS...: `kbound check --quiet --kernel python3 ARGS`, output in $scratch/LABEL.*
run_check() {
  local label=$1
  shift
  set +e
  "$KBOUND" check --quiet --kernel python3 "$@" >"$scratch/$label.out" 2>"$scratch/$label.err"
  rc=$?
  set -e
}

# passed LABEL: asserts the check LABEL exited 0; when it did not, prints what it failed (its FAIL
# lines and kbound's words, from both streams), so one red run says why.
passed() {
  ok "$1: exit 0 (got $rc)" [ "$rc" -eq 0 ]
  [ "$rc" -eq 0 ] || grep -hE '^(FAIL|kbound:)' "$scratch/$1.err" "$scratch/$1.out" | head -20 | sed 's/^/    | /'
}

is_json_report() {
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"] in ("pass","fail")' "$1"
}

echo "a character device is written, never replaced"
dev="$scratch/null-device"
if mknod "$dev" c 1 3 2>/dev/null; then
  # A private node of /dev/null: before this fix the report was renamed over it (as root, over
  # /dev/null itself for the whole machine).
  run_check dev --json "$dev" --junit "$dev-xml"
  passed dev
  ok "dev: still a character device" [ -c "$dev" ]
  ok "dev: nothing left beside it" bash -c "! ls '$scratch' | grep -q 'null-device.tmp'"
else
  echo "  NOT testing a private device node: mknod needs root here (/dev/full and the FIFO below still run)"
fi
run_check full --json /dev/full
ok "full: exit 1 (got $rc)" [ "$rc" -eq 1 ]
ok "full: the real errno, named with the path" \
  grep -q "cannot write the --json report to /dev/full: No space left on device" "$scratch/full.err"
ok "full: /dev/full is still a character device" [ -c /dev/full ]

echo "a FIFO: written for its reader, never replaced; without a reader refused at once"
fifo="$scratch/report.fifo"
mkfifo "$fifo"
cat "$fifo" >"$scratch/fifo.got" &
reader=$!
run_check fifo --json "$fifo"
wait "$reader"
passed fifo
[ "$rc" -eq 0 ] || json_get "$scratch/fifo.got" \
  "[(c['id'], c['status'], c['detail']) for k in d['kernels'] for c in k['checks'] if c['status'] != 'pass']" >&2 || true
ok "fifo: the reader got the whole JSON report" is_json_report "$scratch/fifo.got"
ok "fifo: still a FIFO" [ -p "$fifo" ]
start=$(date +%s)
run_check nofifo --junit "$fifo"
ok "nofifo: exit 1 (got $rc)" [ "$rc" -eq 1 ]
ok "nofifo: said so" grep -q "cannot write the --junit report to $fifo: a FIFO nobody is reading" "$scratch/nofifo.err"
ok "nofifo: never waited for a reader" [ $(($(date +%s) - start)) -lt 60 ]
ok "nofifo: still a FIFO" [ -p "$fifo" ]

echo "standard output: '-', /dev/stdout, a pipe; the summary moves to standard error"
run_check dash --json -
passed dash
ok "dash: stdout is the JSON report alone" is_json_report "$scratch/dash.out"
ok "dash: the summary is on stderr ($(grep -m1 '^PASS' "$scratch/dash.err" | cut -c1-160))" grep -q "^PASS: " "$scratch/dash.err"
ok "dash: no file named '-' was made" [ ! -e ./- ]
run_check devstdout --junit /dev/stdout
passed devstdout
ok "devstdout: the redirected file holds the JUnit report" grep -q '^<?xml' "$scratch/devstdout.out"
ok "devstdout: and not the summary" bash -c "! grep -q '^PASS: full boundary' '$scratch/devstdout.out'"
ok "devstdout: /dev/stdout is still a symlink" [ -L /dev/stdout ]
set +e
"$KBOUND" check --quiet --kernel python3 --json - 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])' >"$scratch/pipe.out"
set -e
ok "pipe: the reader parses the report" [ "$(cat "$scratch/pipe.out")" = "pass" ]
set +e
"$KBOUND" check --quiet --kernel python3 >/dev/full 2>"$scratch/stdoutfull.err"
rc=$?
set -e
ok "stdout on a full device: exit 1 (got $rc)" [ "$rc" -eq 1 ]
ok "stdout on a full device: said so" grep -q "cannot write to standard output: No space left on device" "$scratch/stdoutfull.err"

echo "regular files: replaced atomically, through a symlink the link stays"
run_check regular --json "$scratch/r.json" --junit "$scratch/r.xml"
passed regular
ok "regular: JSON written" is_json_report "$scratch/r.json"
ok "regular: JUnit written" grep -q '^<?xml' "$scratch/r.xml"
ln -s r.json "$scratch/link.json"
run_check link --json "$scratch/link.json"
passed link
ok "link: still a symlink" [ -L "$scratch/link.json" ]
ok "link: the file it names was rewritten" is_json_report "$scratch/r.json"

echo "usage errors before any kernel starts (exit 2)"
usage() {
  local label=$1 pattern=$2
  shift 2
  set +e
  "$KBOUND" "$@" >"$scratch/$label.out" 2>"$scratch/$label.err"
  rc=$?
  set -e
  ok "$label: exit 2 (got $rc)" [ "$rc" -eq 2 ]
  ok "$label: says /$pattern/" grep -Eq -- "$pattern" "$scratch/$label.err"
  ok "$label: no kernel started" bash -c "! grep -q 'starting in bubblewrap' '$scratch/$label.err'"
}
usage dir "check: cannot write the --json report to $scratch: it is a directory" check --kernel python3 --json "$scratch"
usage nodir "conformance: cannot write the --junit report to $scratch/no/such/r.xml: no such folder" \
  conformance --kernel python3 --junit "$scratch/no/such/r.xml"
usage twostdout "check: --json and --junit both go to standard output" check --kernel python3 --json - --junit /dev/stdout
usage same "check: --json and --junit name the same file" check --kernel python3 --json "$scratch/r.json" --junit "$scratch/r.json"
usage sametr "conformance: --json and --transcript name the same file" \
  conformance --kernel python3 --json "$scratch/t.jsonl" --transcript "$scratch/t.jsonl"
usage trdash "the transcript is written to a file" run --kernel python3 --transcript - 'print(1)'
usage empty "check: --json takes a file name \(or - for standard output\)" check --kernel python3 --json ''
if [ "$(id -u)" -eq 0 ]; then
  # Root passes every permission check: a read-only mount is what it cannot write.
  mkdir "$scratch/ro"
  set +e
  unshare -m sh -c "mount -t tmpfs -o ro none '$scratch/ro' && exec '$KBOUND' check --kernel python3 --json '$scratch/ro/r.json'" \
    >"$scratch/ro.out" 2>"$scratch/ro.err"
  rc=$?
  set -e
  ok "read-only: exit 2 (got $rc)" [ "$rc" -eq 2 ]
  ok "read-only: says so" grep -q "cannot write the --json report to $scratch/ro/r.json: Read-only file system" "$scratch/ro.err"
  # A full file system under a regular report: ENOSPC, not EIO, no temporary file left, and the
  # earlier run's PASS report that was there is removed (a CI job would take it for this run's).
  mkdir "$scratch/small"
  set +e
  unshare -m sh -c "mount -t tmpfs -o size=64k none '$scratch/small' &&
    printf '{\"verdict\": \"pass\", \"exit_code\": 0}' >'$scratch/small/r.json' &&
    head -c 65536 /dev/zero >'$scratch/small/filler' 2>/dev/null;
    '$KBOUND' check --quiet --kernel python3 --json '$scratch/small/r.json' >/dev/null; echo \$? >'$scratch/small.rc'; ls -A '$scratch/small' >'$scratch/small.ls'" \
    2>"$scratch/small.err"
  set -e
  ok "full disk: exit 1 (got $(cat "$scratch/small.rc"))" [ "$(cat "$scratch/small.rc")" = 1 ]
  ok "full disk: No space left on device, named with the path" \
    grep -q "cannot write the --json report to $scratch/small/r.json: No space left on device" "$scratch/small.err"
  ok "full disk: the earlier PASS report is removed, and no temporary file left" [ "$(cat "$scratch/small.ls")" = "filler" ]
  ok "full disk: and it says no report is left there" grep -qF "(no report is left there: not an earlier run's either)" "$scratch/small.err"
  # The same for kbound's own files: the canaries of check on a full runtime folder.
  mkdir "$scratch/fullrt"
  set +e
  unshare -m sh -c "mount -t tmpfs -o size=4k none '$scratch/fullrt' && head -c 4096 /dev/zero >'$scratch/fullrt/filler' 2>/dev/null;
    KBOUND_RUNTIME_DIR='$scratch/fullrt' '$KBOUND' check --quiet --kernel python3 >/dev/null; echo \$? >'$scratch/fullrt.rc'; ls -A '$scratch/fullrt' >'$scratch/fullrt.ls'" \
    2>"$scratch/fullrt.err"
  set -e
  ok "full runtime folder: exit 3 (got $(cat "$scratch/fullrt.rc"))" [ "$(cat "$scratch/fullrt.rc")" = 3 ]
  ok "full runtime folder: No space left on device" \
    grep -q "cannot create the canaries under $scratch/fullrt/kbound-.*: No space left on device" "$scratch/fullrt.err"
  ok "full runtime folder: nothing left behind" [ "$(cat "$scratch/fullrt.ls")" = "filler" ]
else
  mkdir -m 0555 "$scratch/ro"
  usage readonly "cannot write the --json report to $scratch/ro/r.json: Permission denied" \
    check --kernel python3 --json "$scratch/ro/r.json"
  echo "  NOT testing a full file system under a regular report: mounting a small tmpfs needs root"
fi

assert_no_leftovers "after the report tests"
finish
