#!/usr/bin/env bash
# kbound check --transcript on python3 and ir: every line is JSON, every request has its reply,
# the transcript holds exactly what the client received, and neither the connection keys nor any
# canary appears in it.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R

# The connection keys to look for: kbound removes each connection file once its kernel is ready,
# so the kernels (python3 and ir, found first in JUPYTER_PATH) are wrapped to save a copy in their
# workspace first, as any kernel could (it can read its own key).
for k in python3 ir; do
  mkdir -p "$scratch/jupyter/kernels/$k"
  /usr/bin/python3 - "/usr/share/jupyter/kernels/$k/kernel.json" "$scratch/jupyter/kernels/$k/kernel.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["argv"] = ["/bin/sh", "-c", 'cp "$0" /workspace/connection-copy.json && exec "$@"', "{connection_file}"] + spec["argv"]
json.dump(spec, open(sys.argv[2], "w"))
PY
done
# A known canary in kbound's own environment (check only generates one when none is set).
canary="kbound-canary-$RANDOM$RANDOM$RANDOM$RANDOM"
set +e
JUPYTER_PATH="$scratch/jupyter" KBOUND_CANARY_SECRET="$canary" "$KBOUND" check --keep --transcript "$scratch/t.jsonl" \
  --json "$scratch/r.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "check with a transcript exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { grep -E "^(FAIL|UNTESTED)" "$scratch/out"; grep -E " (fail|untested): " "$scratch/err"; }
ok "transcript is private (0600)" [ "$(stat -c %a "$scratch/t.jsonl")" = 600 ]
ok "stderr says how many messages were written" grep -q "transcript: [0-9]* message(s) written" "$scratch/err"

# The secrets to look for: both connection keys (the kernels' copies), the canaries check planted.
base=$(find "$KBOUND_RUNTIME_DIR" -mindepth 1 -maxdepth 1 -name 'kbound-*' | head -1)
keys=$(for f in "$base"/teams/*/workspace/connection-copy.json; do json_get "$f" "d['key']"; done)
ok "two connection keys captured" [ "$(echo "$keys" | grep -c .)" -eq 2 ]
ok "no connection file was left on disk (removed once each kernel was ready)" \
  bash -c "! compgen -G '$base/teams/*/run/kernel.json'"
cred=$(cat "$base/host-secrets/credentials")
sib=$(cat "$base"/teams/*-sibling/workspace/canary.txt)
for s in $keys "$cred" "$sib" "$canary"; do
  ok "secret ${s:0:6}... is not in the transcript" bash -c "[ -n '$s' ] && ! grep -qF '$s' '$scratch/t.jsonl'"
done

ok "transcript content is complete and consistent" /usr/bin/python3 - "$scratch/t.jsonl" "$scratch/r.json" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]   # every line parses
report = json.load(open(sys.argv[2]))
assert lines, "empty transcript"
need = {"seq", "time", "elapsed_ms", "kernel", "team", "channel", "direction", "msg_type", "header",
        "parent_header", "metadata", "content", "buffers"}
for l in lines:
    assert need <= set(l), set(l) ^ need
    assert l["direction"] in ("in", "out"), l["direction"]
    assert l["channel"] in ("shell", "iopub", "stdin", "control"), l["channel"]
    assert "signature" not in l
assert [l["seq"] for l in lines] == list(range(1, len(lines) + 1)), "seq not in file order"
kernels = {k["name"]: k for k in report["kernels"]}
assert set(l["kernel"] for l in lines) == {"python3", "ir"}
# The kernels ran concurrently: their lines are mixed, not one block after the other.
order = [l["kernel"] for l in lines]
assert sum(1 for a, b in zip(order, order[1:]) if a != b) > 2, "no interleaving of kernels at all?"
for name in ("python3", "ir"):
    mine = [l for l in lines if l["kernel"] == name]
    team = kernels[name]["team"]
    assert all(l["team"] == team for l in mine)
    out = [l for l in mine if l["direction"] == "out"]
    inn = [l for l in mine if l["direction"] == "in"]
    # Exactly what the client received (the hook sees every message it took in).
    assert len(inn) == kernels[name]["messages"]["received"], (name, len(inn), kernels[name]["messages"])
    def replies(req_id, channel, typ):
        return [l for l in inn if l["channel"] == channel and l["msg_type"] == typ
                and l["parent_header"].get("msg_id") == req_id]
    execs = [l for l in out if l["msg_type"] == "execute_request"]
    assert len(execs) >= 5, (name, len(execs))   # identity, probe, set_var, two long cells, get_var
    for e in execs:
        assert e["channel"] == "shell"
        assert len(replies(e["header"]["msg_id"], "shell", "execute_reply")) == 1, (name, e["content"]["code"][:40])
        assert any(l["channel"] == "iopub" and l["parent_header"].get("msg_id") == e["header"]["msg_id"]
                   for l in inn), "no iopub for an execute_request"
    infos = [l for l in out if l["msg_type"] == "kernel_info_request"]
    assert infos and any(replies(i["header"]["msg_id"], "shell", "kernel_info_reply") for i in infos)
    ints = [l for l in out if l["msg_type"] == "interrupt_request"]
    assert len(ints) >= 1 and all(l["channel"] == "control" for l in ints), name
    got_int = [r for i in ints for r in replies(i["header"]["msg_id"], "control", "interrupt_reply")]
    # ipykernel answers interrupt_request; IRkernel 1.3.2 does not (docs/kernels.md).
    assert (len(got_int) == len(ints)) if name == "python3" else (got_int == []), (name, len(got_int))
    downs = [l for l in out if l["msg_type"] == "shutdown_request"]
    assert len(downs) == 1 and downs[0]["channel"] == "control" and downs[0]["content"] == {"restart": False}
    assert replies(downs[0]["header"]["msg_id"], "control", "shutdown_reply"), name
    # The result of the probe cell arrives as display_data with the probe MIME type.
    assert any(l["msg_type"] == "display_data" and "application/vnd.kbound.probe+json" in l["content"].get("data", {})
               for l in inn), name
print(len(lines), "lines checked")
PY
rm -rf "$base"

echo "run --transcript: a key the kernel prints is redacted"
set +e
# The connection file is gone once the kernel is ready; the key is in the kernel's memory, and
# the cell saves a copy for this test to look for.
"$KBOUND" run --kernel python3 --keep --transcript "$scratch/run.jsonl" \
  'import json; k = get_ipython().kernel.session.key.decode(); open("/workspace/key.txt", "w").write(k); print(json.dumps({"key": k}))' \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "run exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
base=$(find "$KBOUND_RUNTIME_DIR" -mindepth 1 -maxdepth 1 -name 'kbound-*' | head -1)
key=$(cat "$base/teams/run/workspace/key.txt")
ok "a key was captured" [ ${#key} -eq 64 ]
ok "the cell printed the key as in a connection file, shown redacted" \
  grep -qF '"key": "[redacted:connection-key]"' "$scratch/out"
ok "the key is not on stdout (it never appears in output)" bash -c '! grep -qF "$1" "$2"' _ "$key" "$scratch/out"
ok "the transcript has it redacted" grep -qF '[redacted:connection-key]' "$scratch/run.jsonl"
ok "the key is nowhere in the transcript" bash -c "! grep -qF '$key' '$scratch/run.jsonl'"
rm -rf "$base"

echo "refusals"
ln -s "$scratch/target" "$scratch/link"
set +e
"$KBOUND" run --kernel python3 --transcript "$scratch/link" '1' >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "a symlinked transcript path is refused as a usage error (rc=$rc)" [ "$rc" -eq 2 ]
ok "the refusal names the file" grep -q "cannot open the transcript $scratch/link" "$scratch/err"
ok "nothing created through the link" [ ! -e "$scratch/target" ]
assert_no_leftovers "after transcripts"
finish
