#!/usr/bin/env bash
# Every bubblewrap users' runners have, from 0.4 on (real binaries from Debian's archive, and 0.4.1
# and 0.6.1 built here from source: tests/fixtures/get-bwrap): kbound reads what each can do from its
# --help, stands in for what it lacks (docs/platforms.md), passes with each by default as root and
# unprivileged, and check and doctor say the same of each, a bwrap that lacks an option kbound
# needs, and one that ignores --size, included.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R apt-get dpkg-deb flock runuser

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

# version: the --version it prints; stand_in: whether it lacks --size and --disable-userns (0.4.x,
# 0.6.x), which kbound then makes up for from the host (src/sandbox/sandbox_stand_in.c).
for entry in 0.4.1:0.4.1:yes 0.4.1-3+deb11u1:0.4.1:yes 0.4.1+source:0.4.1:yes 0.6.1:0.6.1:yes 0.8.0:0.8.0:no \
  0.12.0:0.12.0:no; do
  IFS=: read -r version prints stand_in <<<"$entry"
  b=$(get_bwrap "$version")
  echo "bubblewrap $version ($b)"
  set +e
  "$KBOUND" doctor --bwrap "$b" >"$scratch/doctor.raw" 2>&1
  rc=$?
  "$KBOUND" doctor --json --bwrap "$b" >"$scratch/doctor.json" 2>"$scratch/doctor.err"
  jrc=$?
  set -e
  unwrapped "$scratch/doctor.raw" >"$scratch/doctor.out"
  [ "$rc" -eq 0 ] || cat "$scratch/doctor.out"
  ok "$version: doctor passes (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$version: doctor --json says the same (rc=$jrc)" \
    [ "$jrc-$(json_get "$scratch/doctor.json" "(d['can_enforce'], d['exit_code'], sorted({i['status'] for i in d['items']}))")" = "0-(True, 0, ['ok'])" ]
  ok "$version: doctor reads every needed option from its --help" \
    grep -qF "[ OK ] bwrap: bubblewrap $prints at $b has every option kbound's sandbox needs" "$scratch/doctor.out"
  if [ "$stand_in" = yes ]; then
    ok "$version: doctor says kbound stands in for --disable-userns" \
      grep -qF "no --disable-userns: kbound sets the sandbox's user.max_user_namespaces itself" "$scratch/doctor.out"
    ok "$version: ... and for --size" grep -qF "no --size: kbound gives each in-memory folder bwrap makes" "$scratch/doctor.out"
    ok "$version: the trial sandbox made both stand-ins" \
      grep -qF "kbound's stand-ins for --size and --disable-userns made" "$scratch/doctor.out"
    ok "$version: doctor read the sizes in the trial's mount table" \
      grep -qF "each sized by kbound's stand-in for --size (this bwrap has none), as the trial sandbox's mount table shows" "$scratch/doctor.out"
  else
    ok "$version: nothing stood in for" not grep -qE "no --(disable-userns|size)" "$scratch/doctor.out"
    ok "$version: doctor read the sizes bwrap gave in the trial's mount table" \
      grep -qF "each sized by bwrap's --size, as the trial sandbox's mount table shows" "$scratch/doctor.out"
  fi
  ok "$version: doctor's trial sandbox is check's and started" \
    grep -qF "[ OK ] sandbox: the sandbox kbound's check starts" "$scratch/doctor.out"

  # check with no option but the bwrap: the default limits, which every in-memory folder meets.
  set +e
  "$KBOUND" check --kernel python3 --kernel ir --bwrap "$b" --json "$scratch/reports/$version.json" \
    >"$scratch/check.out" 2>"$scratch/check.err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -20 "$scratch/check.err"; }
  ok "$version: check passes python3 and ir with the defaults (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$version: the report names this bwrap's version" \
    [ "$(json_get "$scratch/reports/$version.json" "d['sandbox']['bwrap_version']")" = "$prints" ]
  ok "$version: sandbox.resources passed with /tmp, /dev/shm and /workspace sized, in every kernel" \
    [ "$(json_get "$scratch/reports/$version.json" "sorted({(c['status'], 'in-memory folders at most 512.0 MiB (tmpfs size' in c['detail'], '/workspace at most 1.0 GiB (a tmpfs of its own' in c['detail'], c['detail'].endswith('NOT claimed (none asked): processor time (--cpu-max)')) for k in d['kernels'] for c in k['checks'] if c['id'] == 'sandbox.resources'})")" = "[('pass', True, True, True)]" ]
  ok "$version: nested user namespaces refused from inside, in every kernel" \
    [ "$(json_get "$scratch/reports/$version.json" "sorted({c['status'] for k in d['kernels'] for c in k['checks'] if c['id'] == 'sandbox.attack_surface'})")" = "['pass']" ]
  # With the filter's user-namespace entries left open, only --disable-userns or kbound's stand-in
  # for it refuses a nested user namespace: the same ENOSPC either way (control: the host's own
  # user may make one).
  set +e
  "$KBOUND" run --kernel python3 --bwrap "$b" --allow-syscall unshare --allow-syscall clone:CLONE_NEWUSER \
    'import subprocess; p = subprocess.run(["unshare", "--user", "true"], capture_output=True, text=True); print("nested:", p.returncode, p.stderr.strip())' \
    >"$scratch/run.out" 2>&1
  set -e
  ok "$version: with the filter's entries open, a nested user namespace is refused with ENOSPC" \
    grep -qF "nested: 1 unshare: unshare failed: No space left on device" "$scratch/run.out"
  assert_no_leftovers "after bubblewrap $version"
done
ok "control: the host's own test user may make a user namespace" as_user unshare --user true

# Unprivileged, through user namespaces, with no option but the bwrap: the ones kbound stands in
# for, and the newest.
for version in 0.4.1+source 0.6.1 0.8.0 0.12.0; do
  b=$(get_bwrap "$version")
  set +e
  as_user "$(user_kbound)" check --kernel python3 --kernel ir --bwrap "$b" --json "$scratch/reports/u-$version.json" \
    >"$scratch/check.out" 2>"$scratch/check.err"
  rc=$?
  as_user "$(user_kbound)" doctor --bwrap "$b" >"$scratch/doctor.out" 2>&1
  drc=$?
  set -e
  [ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -20 "$scratch/check.err"; }
  ok "$version as $user: check passes python3 and ir (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$version as $user: doctor agrees (rc=$drc)" [ "$drc" -eq 0 ]
done

# doctor fails exactly where check does: a bwrap that lists --size and ignores it (0.8.0 with
# --size dropped from its arguments) leaves /tmp unsized; check fails sandbox.resources, and
# doctor's trial sandbox shows the same and says so, exit 3.
real=$(get_bwrap 0.8.0)
cat >"$scratch/nosize-bwrap" <<SH
#!/bin/bash
args=()
while [ \$# -gt 0 ]; do
  if [ "\$1" = --size ]; then shift 2; continue; fi
  args+=("\$1"); shift
done
exec "$real" "\${args[@]}"
SH
chmod 755 "$scratch/nosize-bwrap"
set +e
"$KBOUND" check --kernel python3 --bwrap "$scratch/nosize-bwrap" >"$scratch/check.out" 2>"$scratch/check.err"
rc=$?
"$KBOUND" doctor --bwrap "$scratch/nosize-bwrap" >"$scratch/doctor.raw" 2>&1
drc=$?
unwrapped "$scratch/doctor.raw" >"$scratch/doctor.out" # an item's words, whatever the width
"$KBOUND" doctor --json --bwrap "$scratch/nosize-bwrap" >"$scratch/doctor.json" 2>&1
set -e
ok "a bwrap that ignores --size: check fails (rc=$rc)" [ "$rc" -eq 1 ]
ok "  ... sandbox.resources" grep -qE "^FAIL +python3 +sandbox.resources " "$scratch/check.out"
ok "  ... and doctor exits 3 (rc=$drc)" [ "$drc" -eq 3 ]
ok "  ... naming sandbox.resources and the fix" \
  grep -qF "[FAIL] limits: " "$scratch/doctor.out"
ok "  ... check will fail sandbox.resources" grep -qF "check will fail sandbox.resources: /tmp is a tmpfs of no size of its own in the trial sandbox" "$scratch/doctor.out"
ok "  ... doctor --json names the check" \
  [ "$(json_get "$scratch/doctor.json" "[(i['name'], i['check']) for i in d['items'] if i['status'] != 'ok']")" = "[('limits', 'sandbox.resources')]" ]
assert_no_leftovers "after the bwrap that ignores --size"

# A bwrap whose --help lacks options kbound needs (0.8.0 with --info-fd and --block-fd hidden, as
# a bwrap older than 0.4 would be): check refuses it, exit 3, in the words doctor uses.
real=$(get_bwrap 0.8.0)
cat >"$scratch/old-bwrap" <<SH
#!/bin/sh
[ "\$1" = --help ] && { "$real" --help | grep -v -e '--info-fd' -e '--block-fd'; exit 0; }
exec "$real" "\$@"
SH
chmod 755 "$scratch/old-bwrap"
words="bubblewrap 0.8.0 at $scratch/old-bwrap lacks --block-fd, --info-fd, which kbound's sandbox needs"
set +e
"$KBOUND" check --kernel python3 --bwrap "$scratch/old-bwrap" >"$scratch/check.out" 2>"$scratch/check.err"
rc=$?
"$KBOUND" doctor --bwrap "$scratch/old-bwrap" >"$scratch/doctor.raw" 2>&1
drc=$?
set -e
unwrapped "$scratch/doctor.raw" >"$scratch/doctor.out"
ok "a bwrap lacking --info-fd and --block-fd: check exits 3 (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... naming them" grep -qF "$words" "$scratch/check.err"
ok "  ... and doctor exits 3 (rc=$drc)" [ "$drc" -eq 3 ]
ok "  ... saying the same" grep -qF "[FAIL] bwrap: $words" "$scratch/doctor.out"
ok "  ... and tries no sandbox" grep -qF "[FAIL] sandbox: not tried: bwrap lacks options kbound needs" "$scratch/doctor.out"
assert_no_leftovers "after the bwrap that lacks options"
finish
