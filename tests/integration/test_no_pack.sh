#!/usr/bin/env bash
# A kernel whose language has no probe set in kernels/ still gets every check the host carries
# alone (judged on the host's evidence, said so), and the checks that need a cell are untested,
# naming the folder to add: exit 1, never 3 for the missing pack alone (issue 12, item 1).
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

dir="$scratch/kernels/nopack"
mkdir -p "$dir"
cat >"$dir/kernel.json" <<'JSON'
{"argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
 "display_name": "a language kbound has no cells for", "language": "cobol", "interrupt_mode": "signal"}
JSON

set +e
"$KBOUND" check --kernel "$dir" --json "$scratch/r.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "no pack: exit 1, not 3 (rc=$rc)" [ "$rc" -eq 1 ]
[ "$rc" -eq 1 ] || { cat "$scratch/out"; tail -5 "$scratch/err"; }
st() { check_status "$scratch/r.json" nopack "$1"; }
detail() { json_get "$scratch/r.json" "next(c['detail'] for c in d['kernels'][0]['checks'] if c['id']=='$1')"; }
# Which checks need only the host and which a cell: kbound's own table (check --list-checks).
host_ids=$(listed_check_ids host)
cell_ids=$(listed_check_ids cell)
ok "the list has checks the host carries alone" [ -n "$host_ids" ]
ok "the list has checks that need a cell" [ -n "$cell_ids" ]
for id in $host_ids; do
  ok "no pack: $id passes on the host's evidence" [ "$(st "$id")" = pass ]
done
ok "no pack: a host-judged pass says it rests on the host alone" \
  grep -qF "the host's evidence only: no cell ran, no probe set for language 'cobol'" <<<"$(detail boundary.write_outside)"
for id in $cell_ids; do
  ok "no pack: $id untested" [ "$(st "$id")" = untested ]
  ok "no pack: $id names the folder to add" grep -qF "add a pack, a folder cobol/ with kbound.json" <<<"$(detail "$id")"
  ok "no pack: $id names --kernels-dir" grep -qF "in a folder of yours given with --kernels-dir DIR" <<<"$(detail "$id")"
done
ok "no pack: the summary never suggests --allow-untested, which check does not take" \
  not grep -q -- "--allow-untested" "$scratch/out" "$scratch/err"
ok "  ... and says a check passes only when tested" grep -qF "(untested: a check passes only when tested)" "$scratch/out"
ok "no pack: every check of the list is reported" same_checks_as_listed "$scratch/r.json"
assert_no_leftovers "after the kernel without a pack"

# A language named as a MIME type (Debian's Macaulay2 kernel says "text/x-macaulay2") is not a
# folder name: kbound names the one folder to add, and the alias that makes it the pack's.
mime="$scratch/kernels/mime"
mkdir -p "$mime"
sed 's|"language": "cobol"|"language": "text/x-cobol"|' "$dir/kernel.json" >"$mime/kernel.json"
set +e
"$KBOUND" check --kernel "$mime" --json "$scratch/m.json" >"$scratch/m.out" 2>"$scratch/m.err"
rc=$?
set -e
ok "MIME-type language: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
mdetail=$(json_get "$scratch/m.json" "next(c['detail'] for c in d['kernels'][0]['checks'] if c['id']=='interrupt.pidfd')")
ok "MIME-type language: one folder to add, and the alias naming the language" \
  grep -qF 'a folder cobol/ with kbound.json ("aliases": ["text/x-cobol"])' <<<"$mdetail"
# A pack made as the detail says is found: the folder name stands for the MIME type.
mkdir -p "$scratch/packs"
cp -r "$KBOUND_SOURCE_DIR/kernels/python" "$scratch/packs/cobol"
sed -i 's|"language": "python"|"language": "cobol"|; s|"aliases": \["python3"\]|"aliases": []|' "$scratch/packs/cobol/kbound.json"
set +e
"$KBOUND" check --kernel "$mime" --kernels-dir "$scratch/packs" --json "$scratch/p.json" >"$scratch/p.out" 2>"$scratch/p.err"
rc=$?
set -e
ok "MIME-type language with the folder's pack: every check judged, exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { cat "$scratch/p.out"; tail -5 "$scratch/p.err"; }
# --kernels-dir adds a user's packs before kbound's, never instead of them: python3 still gets
# kbound's python pack in the same run, and the user's pack is the one the cobol kernel used.
set +e
"$KBOUND" check --kernel "$dir" --kernel python3 --kernels-dir "$scratch/packs" --json "$scratch/b.json" \
  >"$scratch/b.out" 2>"$scratch/b.err"
rc=$?
set -e
ok "a user's pack beside kbound's: both kernels pass, exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { cat "$scratch/b.out"; tail -5 "$scratch/b.err"; }
ok "a user's pack beside kbound's: no check untested" \
  [ "$(json_get "$scratch/b.json" "sum(c['status'] == 'untested' for k in d['kernels'] for c in k['checks'])")" = 0 ]
set +e
"$KBOUND" check --kernel python3 --kernels-dir "$scratch/none" >/dev/null 2>"$scratch/none.err"
rc=$?
set -e
ok "a --kernels-dir that is no folder is refused before any kernel starts (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... naming the folder and why" grep -qF -- "--kernels-dir $scratch/none: No such file or directory" "$scratch/none.err"
# The worked example of docs/probes-cells.md ("Writing a pack"), as the page gives it: a new user's
# pack for a language kbound does not ship must judge every check.
/usr/bin/python3 - "$KBOUND_SOURCE_DIR/docs/probes-cells.md" "$scratch/doc-packs/snake" "$scratch/kernels/snake" <<'PY'
import json, os, re, sys
page = open(sys.argv[1]).read()
blocks = re.findall(r"```(?:json|python)\n(.*?)```", page[page.index("## Writing a pack"):], re.S)
names = ["kbound.json", "identity.py", "set_var.py", "get_var.py", "long.py", "probe.py"]
assert len(blocks) == len(names), "the worked example has %d code blocks, not %d" % (len(blocks), len(names))
os.makedirs(sys.argv[2]); os.makedirs(sys.argv[3])
for body, name in zip(blocks, names):
    open(os.path.join(sys.argv[2], name), "w").write(body)
open(os.path.join(sys.argv[2], "attack_surface.py"), "w").write(blocks[5].replace('"boundary"', '"attack-surface"'))
json.dump({"argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
           "display_name": "snake", "language": "snake", "interrupt_mode": "signal"},
          open(os.path.join(sys.argv[3], "kernel.json"), "w"))
PY
set +e
"$KBOUND" check --kernel "$scratch/kernels/snake" --kernels-dir "$scratch/doc-packs" --json "$scratch/s.json" \
  >"$scratch/s.out" 2>"$scratch/s.err"
rc=$?
set -e
ok "the worked example of docs/probes-cells.md: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { cat "$scratch/s.out"; tail -5 "$scratch/s.err"; }
ok "the worked example: every check of the list judged, none untested" same_checks_as_listed "$scratch/s.json"
ok "  ... and all pass" \
  [ "$(json_get "$scratch/s.json" "sorted({c['status'] for c in d['kernels'][0]['checks']})")" = "['pass']" ]
assert_no_leftovers "after the kernels named by MIME type"
finish
