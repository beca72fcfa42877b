#!/usr/bin/env bash
# The docs name every check kbound runs: each id of its table (`kbound check --list-checks`) is in
# the README's claims table, docs/probes.md, docs/report-format.md's ordered list (in the same order)
# and the man page, and each documented list names no check kbound does not run (issue 23).
source "$(dirname "$0")/lib.sh"

"$KBOUND" check --list-checks >"$scratch/list"
ok "--list-checks exits 0 and lists checks" [ -s "$scratch/list" ]
ok "every line is id, phase, needs and claim, tab-separated" \
  awk -F'\t' 'NF != 4 || $1 !~ /^[a-z]+\.[a-z_0-9]+$/ || ($3 != "host" && $3 != "cell") || $4 == "" {bad=1} END {exit bad}' \
  "$scratch/list"
ok "each id's first part is its phase" awk -F'\t' 'index($1, $2 ".") != 1 {bad=1} END {exit bad}' "$scratch/list"
ids=$(cut -f1 "$scratch/list")
ok "no id is listed twice" [ "$(sort <<<"$ids" | uniq -d)" = "" ]

# The page's source, its hyphen escapes undone (the rendered text hyphenates long ids).
sed 's/\\-/-/g' "$KBOUND_SOURCE_DIR/docs/kbound.1" >"$scratch/page.txt"
for doc in README.md docs/probes.md docs/report-format.md; do
  for id in $ids; do
    ok "$doc names $id" grep -qF "\`$id\`" "$KBOUND_SOURCE_DIR/$doc"
  done
done
for id in $ids; do
  ok "the man page names $id" grep -qF "$id" "$scratch/page.txt"
done
ok "docs/report-format.md lists the ids in kbound's order" [ "$(documented_check_ids)" = "$ids" ]

# The other way round: a check id a doc names is one kbound runs (a renamed or dropped check
# leaves no stale row). Conformance items share the "interrupt." prefix, so only the tables of
# checks are read: the README's claims table and probes.md's "Per check" table.
stale=$(/usr/bin/python3 - "$KBOUND_SOURCE_DIR" "$scratch/list" <<'PY'
import re, sys
top, listed = sys.argv[1], {l.split("\t")[0] for l in open(sys.argv[2]) if l.strip()}
for doc in ("README.md", "docs/probes.md"):
    for line in open(f"{top}/{doc}"):
        m = re.match(r"\| `((?:sandbox|identity|boundary|interrupt|persistence|lifecycle)\.[a-z_0-9]+)` \|", line)
        if m and m.group(1) not in listed:
            print(f"{doc}: {m.group(1)}")
PY
)
ok "no table row of a doc names a check kbound does not run${stale:+: $stale}" [ -z "$stale" ]
finish
