#!/usr/bin/env bash
# A claim is only as wide as what was planted: with a HOME kbound cannot write to, the home canary
# is not planted; boundary.credentials still passes on what it tested, but its detail, its evidence,
# the summary and the JUnit file say what was not tested, and the run never reads as a full
# boundary pass. Run as the invoking user (as root: a HOME under a read-only bind, in a mount
# namespace of the run's own) and, as root, as the test user too (a HOME of root's).
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 unshare

# narrowed WHO REPORT OUT WHY: the run's report and human output say the home canary was not
# tested, for WHY, and claim no full boundary.
narrowed() {
  local who=$1 r=$2 out=$3 why=$4 said
  said="not tested: credential canary in the user's home ($why)"
  ok "$who: exit 0: nothing broke, the claim is narrower" [ "$(json_get "$r" "d['exit_code']")" = 0 ]
  ok "$who: boundary.credentials passes on what it tested" [ "$(check_status "$r" python3 boundary.credentials)" = pass ]
  ok "$who: its detail says first what it did not test" \
    [ "$(json_get "$r" "next(c['detail'] for c in d['kernels'][0]['checks'] if c['id']=='boundary.credentials').startswith('''$said; ''')")" = True ]
  ok "$who: so does its evidence" \
    [ "$(json_get "$r" "next(c['evidence']['not_tested'] for c in d['kernels'][0]['checks'] if c['id']=='boundary.credentials') == ['''$said''']")" = True ]
  ok "$who: boundary.cross_team tested all it claims" \
    [ "$(json_get "$r" "next(c['evidence']['not_tested'] for c in d['kernels'][0]['checks'] if c['id']=='boundary.cross_team')")" = "[]" ]
  ok "$who: no full boundary claimed" [ "$(json_get "$r" "d['claims']['full_boundary']")" = False ]
  said=$(json_get "$r" "d['claims']['summary']")
  ok "$who: the summary reads a partial boundary" grep -q "^PASS WITH PARTIAL BOUNDARY: " <<<"$said"
  # (another check may be held in part before it: unprivileged, boundary.sockets while other users'
  # sandboxes run on the machine, their namespaces' sockets not placed)
  ok "$who: the summary names what was not tested" \
    grep -qE "boundaries held in part: (.*, )?python3 boundary.credentials \(not tested: credential canary in the user's home \(" <<<"$said"
  ok "$who: ... and why" grep -qF "python3 boundary.credentials (not tested: credential canary in the user's home ($why))" <<<"$said"
  ok "$who: the summary never says full boundary" not grep -qi "full boundary" <<<"$said"
  ok "$who: the human summary too" grep -q "^PASS WITH PARTIAL BOUNDARY: .*boundaries held in part: .*python3 boundary.credentials" "$out"
  ok "$who: the JUnit test case says it" grep -qF "<system-out>not tested: credential canary in the user&apos;s home (" "${r%.json}.xml"
}

home="$scratch/home"
mkdir -m 755 "$home"

echo "control: a HOME kbound can write to, so the full boundary can hold"
set +e
HOME="$home" "$KBOUND" check --kernel python3 --json "$scratch/control.json" >"$scratch/control.out" 2>"$scratch/control.err"
rc=$?
set -e
ok "control: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
ok "control: full boundary held" [ "$(json_get "$scratch/control.json" "d['claims']['full_boundary']")" = True ]
# when it does not, the summary says which claim was not made and why (the report goes with the scratch)
[ "$(json_get "$scratch/control.json" "d['claims']['full_boundary']")" = True ] ||
  json_get "$scratch/control.json" "d['claims']['summary']" >&2  || true
ok "control: nothing said not tested" \
  [ "$(json_get "$scratch/control.json" "next(c['evidence']['not_tested'] for c in d['kernels'][0]['checks'] if c['id']=='boundary.credentials')")" = "[]" ]
ok "control: no canary left in the home" [ -z "$(ls -A "$home")" ]

echo "the invoking user with a HOME it cannot write to"
set +e
if [ "$(id -u)" -eq 0 ]; then
  # root writes through any mode: a read-only bind of the folder, for kbound alone
  why="kbound cannot write to $home: Read-only file system"
  unshare -m --propagation private -- bash -c 'mount --bind -o ro "$1" "$1" && shift && exec "$@"' _ "$home" \
    env HOME="$home" "$KBOUND" check --kernel python3 --json "$scratch/self.json" --junit "$scratch/self.xml" \
    >"$scratch/self.out" 2>"$scratch/self.err"
else
  why="kbound cannot write to $home: Permission denied"
  chmod 555 "$home"
  HOME="$home" "$KBOUND" check --kernel python3 --json "$scratch/self.json" --junit "$scratch/self.xml" \
    >"$scratch/self.out" 2>"$scratch/self.err"
fi
rc=$?
set -e
chmod 755 "$home"
ok "self: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -20 "$scratch/self.err"
ok "self: kbound said it at the start" grep -qF "no canary in $home (" "$scratch/self.err"
narrowed self "$scratch/self.json" "$scratch/self.out" "$why"
ok "self: nothing was written to the home" [ -z "$(ls -A "$home")" ]

if [ "$(id -u)" -eq 0 ]; then
  user=$(test_user)
  echo "$user with a HOME of root's (0755): it cannot write there"
  chmod 1777 "$KBOUND_RUNTIME_DIR"
  mkdir -m 1777 "$scratch/reports"
  set +e
  runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" LANG=C.UTF-8 \
    KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$(user_kbound)" check --kernel python3 \
    --json "$scratch/reports/user.json" --junit "$scratch/reports/user.xml" >"$scratch/user.out" 2>"$scratch/user.err"
  rc=$?
  set -e
  ok "$user: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
  [ "$rc" -eq 0 ] || tail -20 "$scratch/user.err"
  narrowed "$user" "$scratch/reports/user.json" "$scratch/user.out" "kbound cannot write to $home: Permission denied"
fi

assert_no_leftovers "after the runs"
finish
