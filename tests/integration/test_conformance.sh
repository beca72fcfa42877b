#!/usr/bin/env bash
# kbound conformance on python3 and ir in real bwrap: every item reported with the status the real
# kernels earn (IRkernel's and ipykernel's known deviations by name), JSON and JUnit parse, a
# kernel that breaks the protocol fails, a listed deviation hides nothing it did not observe nor
# any other problem of the same item, and a language without snippets gets its language items
# "untested" with the reason, which fails the run unless --allow-untested.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R

items="kernel_info.reply kernel_info.protocol_version kernel_info.implementation kernel_info.language_info
kernel_info.banner heartbeat execute.stdout execute.ordering execute.stderr execute.result execute.display_data
execute.update_display_data execute.clear_output execute.pager execute.error execute.count execute.silent stdin.input
stdin.not_allowed is_complete.complete is_complete.incomplete is_complete.invalid complete inspect history.tail
history.output history.range history.search comm_info comm.open comm.msg comm_info.target comm.close
comm.unknown_target debug.initialize subshells interrupt.idle interrupt.control interrupt.signal shutdown
messages.shape"
n_items=$(echo $items | wc -w)

# expected KERNEL ITEM: the status the real kernel earns (measured; docs/kernels.md).
expected() {
  case "$1/$2" in
    python3/execute.silent | python3/history.range | python3/messages.shape) echo deviation ;;
    ir/execute.result | ir/execute.count | ir/execute.silent | ir/stdin.not_allowed | ir/history.* | ir/comm_info | \
      ir/comm_info.target | ir/comm.close | ir/interrupt.signal | ir/messages.shape) echo deviation ;;
    # IRkernel ignores interrupt_request; its kernelspec declares signals (no interrupt_mode), so
    # the rule check shares makes that unsupported, not a failure nor a deviation (src/verdict/rules.c).
    ir/interrupt.idle | ir/interrupt.control) echo unsupported ;;
    # Optional features: neither kernel claims a debugger in kernel_info (ipykernel's needs a
    # loopback TCP port, which the default seccomp policy refuses) nor subshells; IRkernel has no
    # display_id (the R pack says so).
    */debug.initialize | */subshells | ir/execute.update_display_data) echo unsupported ;;
    *) echo pass ;;
  esac
}

# item_field FILE KERNEL ITEM FIELD
item_field() {
  json_get "$1" "next((c['$4'] for k in d['kernels'] if k['name']=='$2' for c in k['checks'] if c['id']=='$3'), 'missing')"
}

echo "python3 and ir"
set +e
"$KBOUND" conformance --json "$scratch/c.json" --junit "$scratch/c.xml" --transcript "$scratch/t.jsonl" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
cat "$scratch/out"
ok "conformance exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -30 "$scratch/err"
ok "the report is a conformance run" [ "$(json_get "$scratch/c.json" "d['kind']")" = conformance ]
ok "verdict pass" [ "$(json_get "$scratch/c.json" "d['verdict']")" = pass ]
ok "no boundary claimed by a conformance run" [ "$(json_get "$scratch/c.json" "d['claims']['full_boundary']")" = False ]
for k in python3 ir; do
  ok "$k: each item exactly once, in order" [ "$(json_get "$scratch/c.json" \
    "' '.join(c['id'] for k in d['kernels'] if k['name']=='$k' for c in k['checks'])")" = "$(echo $items)" ]
  for id in $items; do
    want=$(expected "$k" "$id")
    got=$(item_field "$scratch/c.json" "$k" "$id" status)
    ok "$k $id is $want (got $got)" [ "$got" = "$want" ]
  done
done
ok "ir's ignored control interrupt names what was observed" \
  [ "$(json_get "$scratch/c.json" "' '.join([c for k in d['kernels'] if k['name']=='ir' for c in k['checks'] if c['id']=='interrupt.control'][0]['evidence']['problems'])")" = "no_reply not_stopped" ]
ok "... and says it is unsupported because the kernelspec declares signals (the rule check uses too)" \
  bash -c "grep -E '^UNSUPPORTED +ir +interrupt.control ' '$scratch/out' | grep -q \"declares interrupt_mode 'signal'\""
ok "ir's abort status is named" bash -c "grep -q 'DEVIATION.*interrupt.signal.*abort' '$scratch/out'"
ok "python3 interrupts raise KeyboardInterrupt" bash -c "grep -E '^PASS +python3 +interrupt.(control|signal) ' '$scratch/out' | grep -c KeyboardInterrupt | grep -qx 2"
ok "one stdout line per kernel x item" [ "$(grep -cE '^(PASS|FAIL|DEVIATION|UNSUPPORTED|UNTESTED) ' "$scratch/out")" -eq $((2 * n_items)) ]
ok "summary names the deviations and the unsupported items" \
  grep -q "^PASS: protocol conformance of python3, ir: .*known deviations: .*ir interrupt.signal.*; unsupported: .*ir interrupt.idle, ir interrupt.control" "$scratch/out"
ok "summary never claims a boundary" bash -c "! grep -qi 'full boundary' '$scratch/out'"
ok "JUnit parses: one case per item, no failure, deviations skipped with their name" \
  /usr/bin/python3 - "$scratch/c.xml" "$((2 * n_items))" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
assert len(cases) == int(sys.argv[2]), len(cases)
assert not root.findall(".//failure"), "failures present"
skipped = [c for c in cases if c.find("skipped") is not None]
assert len(skipped) == 23, len(skipped)
assert all(s.find("skipped").get("message").startswith(("deviation: known deviation of", "unsupported: ")) for s in skipped)
PY
ok "the transcript has every kind of request" /usr/bin/python3 - "$scratch/t.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for k in ("python3", "ir"):
    sent = {l["msg_type"] for l in lines if l["kernel"] == k and l["direction"] == "out"}
    want = {"kernel_info_request", "execute_request", "is_complete_request", "complete_request", "inspect_request",
            "history_request", "comm_info_request", "interrupt_request", "shutdown_request", "comm_open", "comm_msg",
            "comm_close", "input_reply", "debug_request"}
    assert want <= sent, (k, want - sent)
    got = {l["msg_type"] for l in lines if l["kernel"] == k and l["direction"] == "in"}
    assert {"input_request", "comm_msg", "comm_close", "clear_output"} <= got, (k, got)
PY
ok "python3: the only shape problem is ipykernel's status-less interrupt_reply" [ "$(json_get "$scratch/c.json" \
  "' '.join([c for k in d['kernels'] if k['name']=='python3' for c in k['checks'] if c['id']=='messages.shape'][0]['evidence']['problems'])")" = \
  "interrupt_reply.status:missing" ]
ok "ir: the shape problems are IRkernel's comm_info_reply and comm_close" [ "$(json_get "$scratch/c.json" \
  "' '.join(sorted([c for k in d['kernels'] if k['name']=='ir' for c in k['checks'] if c['id']=='messages.shape'][0]['evidence']['problems']))")" = \
  "comm_close.data:type comm_info_reply.comms:missing" ]
ok "every message received was checked (as many as the client counted)" /usr/bin/python3 - "$scratch/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in d["kernels"]:
    shape = next(c for c in k["checks"] if c["id"] == "messages.shape")["evidence"]
    assert shape["messages"] == k["messages"]["received"], (k["name"], shape["messages"], k["messages"])
    assert shape["unknown_types"] == 0 and shape["types"]["input_request"] >= 1, (k["name"], shape)
PY
ok "ir's input_request despite allow_stdin false is named" [ "$(item_field "$scratch/c.json" ir stdin.not_allowed status)" = deviation ]
assert_no_leftovers "after conformance"

echo "a kernel that lies in is_complete_reply"
liar="$fixtures/conformance-liar"
set +e
"$KBOUND" conformance --quiet --kernel "$liar" --ro-bind "$liar" --json "$scratch/l.json" --junit "$scratch/l.xml" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "the liar fails conformance (rc=$rc)" [ "$rc" -eq 1 ]
ok "is_complete.incomplete fails" [ "$(item_field "$scratch/l.json" conformance-liar is_complete.incomplete status)" = fail ]
ok "is_complete.invalid fails" [ "$(item_field "$scratch/l.json" conformance-liar is_complete.invalid status)" = fail ]
ok "is_complete.complete still passes" [ "$(item_field "$scratch/l.json" conformance-liar is_complete.complete status)" = pass ]
ok "the detail says what it answered" grep -q "expected 'incomplete': sample 1 answered 'complete'" "$scratch/out"
ok "summary is a FAIL naming both items" grep -q "^FAIL: conformance-liar is_complete.incomplete, conformance-liar is_complete.invalid failed" "$scratch/out"
ok "JUnit has exactly those two failures" /usr/bin/python3 - "$scratch/l.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
failed = sorted(c.get("name") for c in root.findall(".//testcase") if c.find("failure") is not None)
assert failed == ["is_complete.incomplete", "is_complete.invalid"], failed
PY

echo "a kernel that breaks the optional features"
breaker="$fixtures/conformance-breaker"
set +e
"$KBOUND" conformance --quiet --kernel "$breaker" --ro-bind "$breaker" --json "$scratch/b.json" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "the breaker fails conformance (rc=$rc)" [ "$rc" -eq 1 ]
# problems FILE KERNEL ITEM: the item's status and its problem codes.
problems() {
  json_get "$1" "' '.join([c['status']] + c['evidence'].get('problems', [])) if (c := next(c for k in d['kernels'] if k['name']=='$2' for c in k['checks'] if c['id']=='$3')) else ''"
}
ok "string session numbers fail history.tail" [ "$(problems "$scratch/b.json" conformance-breaker history.tail)" = "fail shape" ]
ok "... and history.output" [ "$(problems "$scratch/b.json" conformance-breaker history.output)" = "fail shape" ]
ok "... and history.search" [ "$(problems "$scratch/b.json" conformance-breaker history.search)" = "fail shape" ]
ok "comm_info ignoring target_name fails comm_info.target" \
  [ "$(problems "$scratch/b.json" conformance-breaker comm_info.target)" = "fail not_filtered" ]
ok "no comm_close for an unknown target fails comm.unknown_target" \
  [ "$(problems "$scratch/b.json" conformance-breaker comm.unknown_target)" = "fail no_close" ]
ok "a claimed debugger that does not answer fails (not unsupported)" \
  [ "$(problems "$scratch/b.json" conformance-breaker debug.initialize)" = "fail no_reply" ]
ok "a claimed subshell that delete does not remove fails" \
  [ "$(problems "$scratch/b.json" conformance-breaker subshells)" = "fail still_listed" ]
ok "inspect_reply without metadata fails messages.shape (with the interrupt_reply no pack excuses here)" \
  [ "$(problems "$scratch/b.json" conformance-breaker messages.shape)" = \
    "fail inspect_reply.metadata:missing interrupt_reply.status:missing" ]
for id in comm.open comm.msg comm.close stdin.input execute.pager execute.clear_output execute.update_display_data inspect; do
  ok "what it does not break still passes: $id" [ "$(item_field "$scratch/b.json" conformance-breaker "$id" status)" = pass ]
done

echo "a deviation applies only to what it names, and only when observed"
cp -r "$KBOUND_SOURCE_DIR/kernels" "$scratch/packs"
/usr/bin/python3 - "$scratch/packs/python/kbound.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["deviations"]["ipython"]["is_complete.incomplete"] = {"observed": "wrong_status", "note": "test: accepted liar"}
m["deviations"]["ipython"]["is_complete.invalid"] = {"observed": "no_reply", "note": "test: a different problem"}
json.dump(m, open(sys.argv[1], "w"))
PY
set +e
"$KBOUND" conformance --quiet --kernel "$liar" --ro-bind "$liar" --kernels-dir "$scratch/packs" \
  --json "$scratch/d.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "still fails (rc=$rc)" [ "$rc" -eq 1 ]
ok "the observed, listed deviation is a deviation" [ "$(item_field "$scratch/d.json" conformance-liar is_complete.incomplete status)" = deviation ]
ok "a listed deviation that was not observed hides nothing" [ "$(item_field "$scratch/d.json" conformance-liar is_complete.invalid status)" = fail ]

echo "a known deviation never hides another problem of the same item"
# The hostile kernel claims to be ipykernel ("ipython"), whose listed deviation of execute.silent is
# stream_when_silent; it also counts the silent request and broadcasts execute_input for it.
impostor="$scratch/impostor"
mkdir -p "$impostor"
sed 's/"implementation": "hostile-kernel"/"implementation": "ipython"/' \
  "$KBOUND_SOURCE_DIR/tests/fixtures/hostile-kernel" >"$impostor/hostile-ipython"
ok "the impostor claims ipython" grep -q '"implementation": "ipython"' "$impostor/hostile-ipython"
/usr/bin/python3 - "$impostor/kernel.json" "$impostor/hostile-ipython" <<'PY'
import json, sys
json.dump({"argv": ["/usr/bin/python3", sys.argv[2], "{connection_file}"], "display_name": "impostor",
           "language": "python", "interrupt_mode": "message"}, open(sys.argv[1], "w"))
PY
set +e
# execute.silent is done within a second; the hostile kernel answers no is_complete, so the run is
# cut short by --timeout after it (and fails for that too).
"$KBOUND" conformance --quiet --kernel "$impostor" --ro-bind "$impostor" --timeout 8 --json "$scratch/i.json" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "the impostor fails (rc=$rc)" [ "$rc" -eq 1 ]
ok "execute.silent fails, not a deviation" [ "$(item_field "$scratch/i.json" impostor execute.silent status)" = fail ]
ok "every problem of execute.silent is in the evidence" [ "$(json_get "$scratch/i.json" \
  "' '.join(next(c for c in d['kernels'][0]['checks'] if c['id']=='execute.silent')['evidence']['problems'])")" = \
  "stream_when_silent count_when_silent execute_input_when_silent" ]
ok "the detail names the count and execute_input" \
  bash -c "grep -E '^FAIL +impostor +execute.silent ' '$scratch/out' | grep 'execution_count went' | grep -q 'broadcast execute_input'"
ok "the detail says only part of it is the known deviation" \
  bash -c "grep -E '^FAIL +impostor +execute.silent ' '$scratch/out' | grep -q 'only part of this is the known deviation of ipython'"

echo "a language without snippets"
mkdir "$scratch/empty-packs"
set +e
# KBOUND_KERNELS_DIR stands for kbound's own packs (--kernels-dir only adds a user's before them).
KBOUND_KERNELS_DIR="$scratch/empty-packs" "$KBOUND" conformance --quiet --kernel python3 --json "$scratch/u.json" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "untested items fail the run without --allow-untested (rc=$rc)" [ "$rc" -eq 1 ]
ok "verdict fail" [ "$(json_get "$scratch/u.json" "d['verdict']")" = fail ]
ok "the summary says why" grep -q "^FAIL: python3 execute.stdout (untested, not accepted without --allow-untested)" "$scratch/out"
for id in kernel_info.reply kernel_info.protocol_version kernel_info.language_info heartbeat comm_info comm.unknown_target \
  interrupt.idle shutdown; do
  status=$(item_field "$scratch/u.json" python3 "$id" status)
  ok "$id still tested: pass" [ "$status" = pass ]
  [ "$status" = pass ] || echo "    | $id: $(item_field "$scratch/u.json" python3 "$id" detail)" >&2
done
for id in debug.initialize subshells; do
  ok "$id still tested: unsupported" [ "$(item_field "$scratch/u.json" python3 "$id" status)" = unsupported ]
done
# ipykernel's known deviations are in the python pack: without it its interrupt_reply is a failure.
ok "messages.shape still tested, and without the pack the deviation is not known" \
  [ "$(item_field "$scratch/u.json" python3 messages.shape status)" = fail ]
for id in execute.stdout execute.ordering execute.count is_complete.invalid complete history.tail history.output \
  history.search stdin.input execute.pager comm.open comm.close interrupt.control interrupt.signal; do
  ok "$id untested" [ "$(item_field "$scratch/u.json" python3 "$id" status)" = untested ]
done
ok "the reason names the missing pack" bash -c "grep -q 'UNTESTED.*execute.stdout.*no language pack for .python.' '$scratch/out'"
# The python pack without its snippets: the language items are untested, its deviations known.
mkdir -p "$scratch/no-snippets/python"
cp "$KBOUND_SOURCE_DIR"/kernels/python/* "$scratch/no-snippets/python/"
/usr/bin/python3 - "$scratch/no-snippets/python/kbound.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
del m["conformance"]
json.dump(m, open(sys.argv[1], "w"))
PY
set +e
"$KBOUND" conformance --quiet --allow-untested --kernel python3 --kernels-dir "$scratch/no-snippets" \
  --json "$scratch/ua.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "with --allow-untested, language-independent items pass, so exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "the report records the allowance" [ "$(json_get "$scratch/ua.json" "d['allow_untested']")" = True ]
ok "summary lists what went untested" grep -q "^PASS: .*untested: python3 execute.stdout" "$scratch/out"
ok "the reason names the missing member" bash -c "grep -q 'UNTESTED.*execute.stdout.*has no \"conformance\" snippets' '$scratch/out'"

echo "a real kernel whose language has no pack"
# ipykernel's own kernelspec, but saying its language is julia: no pack, so every language item is
# untested (and language_info.name differs from the kernelspec's language).
mkdir -p "$scratch/julia/fake-julia"
/usr/bin/python3 - "$scratch/julia/fake-julia/kernel.json" <<'PY'
import json, sys
spec = json.load(open("/usr/share/jupyter/kernels/python3/kernel.json"))
spec["language"], spec["display_name"] = "julia", "ipykernel calling itself julia"
json.dump(spec, open(sys.argv[1], "w"))
PY
set +e
"$KBOUND" conformance --quiet --kernel "$scratch/julia/fake-julia" --ro-bind "$scratch/julia" \
  --json "$scratch/j.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "an unknown language fails the run (rc=$rc)" [ "$rc" -eq 1 ]
ok "its language items are untested with the reason" \
  bash -c "grep -q 'UNTESTED.*execute.stdout.*no language pack for .julia.' '$scratch/out'"
ok "heartbeat still passes" [ "$(item_field "$scratch/j.json" fake-julia heartbeat status)" = pass ]
ok "a language name that differs from the kernelspec's is a warning, not a failure" \
  [ "$(item_field "$scratch/j.json" fake-julia kernel_info.language_info status)" = pass ]
ok "the warning names both" bash -c "grep -E '^PASS +fake-julia +kernel_info.language_info ' '$scratch/out' | \
  grep -q \"warning: language_info.name 'python' differs from the kernelspec's language 'julia'\""
ok "the kernel's warnings are in the report" [ "$(json_get "$scratch/j.json" "d['kernels'][0]['warnings'][0][:40]")" = \
  "language_info.name 'python' differs from" ]
ok "the summary names an untested item" grep -q "^FAIL: .*fake-julia execute.stdout (untested" "$scratch/out"

echo "cannot enforce"
set +e
"$KBOUND" conformance --quiet --kernel python3 --bwrap /nonexistent/bwrap >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "no bubblewrap → exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
set +e
"$KBOUND" conformance --kernel no-such-kernel-xyz >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "unknown kernel → exit 3 naming it (rc=$rc)" bash -c "[ $rc -eq 3 ] && grep -q \"kernel 'no-such-kernel-xyz'\" '$scratch/err'"
assert_no_leftovers "after all conformance runs"
finish
