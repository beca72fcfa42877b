#!/usr/bin/env bash
# The JSON Schema of the reports (schemas/kbound-report.schema.json) and docs/report-format.md say
# the same: the schema is a valid Draft 7 schema; every field of the page's example run object is
# one the schema knows, and every field the schema defines for the run, its claims, sandbox,
# kernels and checks is on the page; the statuses are the same list. Real reports of check,
# conformance and a refused run validate against it (as every report of every test does, in
# lib.sh's finish), and a report that drifts from it is refused.
. "$(dirname "$0")/lib.sh"
require python3

schema="$KBOUND_SOURCE_DIR/schemas/kbound-report.schema.json"
page="$KBOUND_SOURCE_DIR/docs/report-format.md"

ok "the schema is a valid Draft 7 JSON Schema" /usr/bin/python3 -c '
import json, sys, jsonschema
jsonschema.Draft7Validator.check_schema(json.load(open(sys.argv[1])))' "$schema"

ok "the page and the schema name the same fields" /usr/bin/python3 - "$schema" "$page" <<'EOF'
import json, re, sys
schema = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
example = re.search(r"```json\n(.*?)```", page, re.S).group(1)
page_keys = set(re.findall(r'"([a-z_]+)"\s*:', example))

def props(node):
    """Every property name the schema defines, anywhere."""
    out = set()
    if isinstance(node, dict):
        for k, v in node.get("properties", {}).items():
            out.add(k)
            out |= props(v)
        for k in ("definitions", "items"):
            if k in node:
                out |= props(node[k]) if k == "items" else set().union(*(props(d) for d in node[k].values()))
    return out

known = props(schema)
unknown = sorted(page_keys - known)
# What the page must show: the fields of the run, its claims and sandbox, a kernel and a check.
d = schema["definitions"]
shown = set(schema["properties"]) | set(schema["properties"]["claims"]["properties"]) \
    | set(schema["properties"]["sandbox"]["properties"]) | set(d["kernel"]["properties"]) \
    | set(d["check"]["properties"])
# kind and allow_untested belong to the conformance section of the page, in backticks.
missing = sorted(k for k in shown if k not in page_keys and f"`{k}`" not in page and f'"{k}"' not in page)
if unknown or missing:
    sys.exit(f"on the page but not in the schema: {unknown}; in the schema but not on the page: {missing}")
statuses = re.search(r'"status": "pass",\s*// ([a-z_ |]+)', example).group(1).split(" | ")
if sorted(statuses) != sorted(d["check"]["properties"]["status"]["enum"]):
    sys.exit(f"statuses: page {statuses}, schema {d['check']['properties']['status']['enum']}")
EOF

set +e
"$KBOUND" check --kernel python3 --json "$scratch/check.json" >/dev/null 2>&1
crc=$?
"$KBOUND" conformance --kernel ir --json "$scratch/conformance.json" >/dev/null 2>&1
frc=$?
"$KBOUND" check --kernel no-such-kernel --json "$scratch/refused.json" >/dev/null 2>&1
rrc=$?
set -e
ok "check passes (rc=$crc)" [ "$crc" -eq 0 ]
ok "conformance of ir runs to a verdict (rc=$frc)" [ "$frc" -le 1 ]
ok "a missing kernel is refused (rc=$rrc)" [ "$rrc" -eq 3 ]

# validate FILE: 0 if it validates, else the first error on stderr.
validate() {
  /usr/bin/python3 -c '
import json, sys, jsonschema
errors = list(jsonschema.Draft7Validator(json.load(open(sys.argv[1]))).iter_errors(json.load(open(sys.argv[2]))))
for e in errors[:3]: print(list(e.path), e.message[:200], file=sys.stderr)
sys.exit(1 if errors else 0)' "$schema" "$1"
}
for r in check conformance refused; do
  ok "the $r report validates" validate "$scratch/$r.json"
done
# A drift the schema must catch: a field it does not define, a status it does not know, a check
# without its problems.
/usr/bin/python3 - "$scratch" <<'EOF'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/check.json"))
r["kernels"][0]["kernel_host_pid"] = 1; json.dump(r, open(f"{d}/drift-field.x", "w"))
r = json.load(open(f"{d}/check.json"))
r["kernels"][0]["checks"][0]["status"] = "skipped"; json.dump(r, open(f"{d}/drift-status.x", "w"))
r = json.load(open(f"{d}/check.json"))
del r["kernels"][0]["checks"][3]["evidence"]["problems"]; json.dump(r, open(f"{d}/drift-problems.x", "w"))
EOF
for drift in field status problems; do
  ok "a report with a drifted $drift is refused" not validate "$scratch/drift-$drift.x"
done

# The evidence schema (generated from facts.def and evidence.def) holds each check's quotes of the
# facts: the real reports' checks validate; a quote of another shape, or an undeclared key in a
# host-made object it quotes, is refused.
evidence_schema="$KBOUND_SOURCE_DIR/schemas/kbound-evidence.schema.json"
validate_checks() { # validate_checks FILE: every check of every kernel against the evidence schema
  /usr/bin/python3 -c '
import json, sys, jsonschema
v = jsonschema.Draft7Validator(json.load(open(sys.argv[1])))
errors = [e for k in json.load(open(sys.argv[2]))["kernels"] for c in k["checks"] for e in v.iter_errors(c)]
for e in errors[:3]: print(list(e.path), e.message[:200], file=sys.stderr)
sys.exit(1 if errors else 0)' "$evidence_schema" "$1"
}
ok "the evidence schema is a valid Draft 7 JSON Schema" /usr/bin/python3 -c '
import json, sys, jsonschema
jsonschema.Draft7Validator.check_schema(json.load(open(sys.argv[1])))' "$evidence_schema"
ok "the check report's quotes of the facts validate" validate_checks "$scratch/check.json"
/usr/bin/python3 - "$scratch" <<'EOF'
import json, sys
d = sys.argv[1]
def check(r, cid):
    return next(c for c in r["kernels"][0]["checks"] if c["id"] == cid)
r = json.load(open(f"{d}/check.json"))
check(r, "sandbox.backend")["evidence"]["kernel_ns"] = "4026531840"; json.dump(r, open(f"{d}/quote-shape.x", "w"))
r = json.load(open(f"{d}/check.json"))
check(r, "sandbox.session")["evidence"]["lifetime"]["forged"] = 1; json.dump(r, open(f"{d}/quote-key.x", "w"))
EOF
ok "a quote of another shape is refused" not validate_checks "$scratch/quote-shape.x"
ok "an undeclared fact in a quoted host object is refused" not validate_checks "$scratch/quote-key.x"

assert_no_leftovers "report schema"
finish
