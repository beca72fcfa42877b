#!/usr/bin/env bash
# Every bubblewrap users' runners have, from 0.4 on (real binaries from Debian's archive:
# tests/fixtures/get-bwrap): kbound reads what each can do from its --help, stands in for what it
# lacks (docs/platforms.md), passes with each as root and unprivileged, and check and doctor say
# the same of each, a bwrap that lacks an option kbound needs included.
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

# version: the --version it prints; stand_in: whether it lacks --disable-userns (0.4.x).
for entry in 0.4.1:0.4.1:yes 0.4.1-3+deb11u1:0.4.1:yes 0.8.0:0.8.0:no 0.12.0:0.12.0:no; do
  IFS=: read -r version prints stand_in <<<"$entry"
  b=$(get_bwrap "$version")
  echo "bubblewrap $version ($b)"
  set +e
  "$KBOUND" doctor --bwrap "$b" >"$scratch/doctor.raw" 2>&1
  rc=$?
  set -e
  unwrapped "$scratch/doctor.raw" >"$scratch/doctor.out"
  [ "$rc" -eq 0 ] || cat "$scratch/doctor.out"
  ok "$version: doctor passes (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$version: doctor reads every needed option from its --help" \
    grep -qF "[ OK ] bwrap: bubblewrap $prints at $b has every option kbound's sandbox needs" "$scratch/doctor.out"
  if [ "$stand_in" = yes ]; then
    ok "$version: doctor says the seccomp filter stands in for --disable-userns" \
      grep -qF "no --disable-userns: kbound's seccomp filter refuses nested user namespaces" "$scratch/doctor.out"
  else
    ok "$version: nothing stood in for" not grep -qF "no --disable-userns" "$scratch/doctor.out"
  fi
  ok "$version: doctor's trial sandbox is check's and started" \
    grep -qF "[ OK ] sandbox: the sandbox kbound's check starts" "$scratch/doctor.out"

  # A bwrap without --size cannot size /tmp or make /workspace a sized tmpfs: sandbox.resources
  # fails, naming both, until the limits are given up (--tmp-size none --workspace-max none, then
  # reported as not claimed).
  sized=()
  if [ "$stand_in" = yes ]; then
    ok "$version: doctor says /tmp cannot be sized" grep -qF "no --size: each in-memory folder (/tmp, /dev/shm)" "$scratch/doctor.out"
    set +e
    "$KBOUND" check --kernel python3 --bwrap "$b" --json "$scratch/default.json" >"$scratch/check.out" 2>"$scratch/check.err"
    rc=$?
    set -e
    ok "$version: by default check fails (rc=$rc)" [ "$rc" -eq 1 ]
    ok "$version:   ... sandbox.resources, naming the unsized /tmp and the missing --size" \
      grep -qE "^FAIL +python3 +sandbox.resources +the sandbox's /(tmp|dev/shm) is a writable tmpfs of no size of its own .*this bwrap has no --size" "$scratch/check.out"
    ok "$version:   ... and the workspace on the host's disk" \
      grep -qF "the sandbox's /workspace is not a tmpfs of at most 1.0 GiB: nothing bounds what it writes there (this bwrap has no --size)" \
      <<<"$(json_get "$scratch/default.json" "' | '.join(next(c for c in d['kernels'][0]['checks'] if c['id'] == 'sandbox.resources')['evidence']['problems'])")"
    sized=(--tmp-size none --workspace-max none)
  fi

  set +e
  "$KBOUND" check --kernel python3 --kernel ir --bwrap "$b" "${sized[@]}" --json "$scratch/reports/$version.json" \
    >"$scratch/check.out" 2>"$scratch/check.err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -20 "$scratch/check.err"; }
  ok "$version: check passes python3 and ir (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$version: the report names this bwrap's version" \
    [ "$(json_get "$scratch/reports/$version.json" "d['sandbox']['bwrap_version']")" = "$prints" ]
  ok "$version: nested user namespaces refused from inside, in every kernel" \
    [ "$(json_get "$scratch/reports/$version.json" "sorted({c['status'] for k in d['kernels'] for c in k['checks'] if c['id'] == 'sandbox.attack_surface'})")" = "['pass']" ]
  assert_no_leftovers "after bubblewrap $version"
done

# Unprivileged, through user namespaces, with the oldest (no --size) and the newest.
for version in 0.4.1 0.12.0; do
  b=$(get_bwrap "$version")
  sized=()
  [ "$version" = 0.4.1 ] && sized=(--tmp-size none --workspace-max none)
  set +e
  as_user "$(user_kbound)" check --kernel python3 --bwrap "$b" "${sized[@]}" --json "$scratch/reports/u-$version.json" \
    >"$scratch/check.out" 2>"$scratch/check.err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || { cat "$scratch/check.out"; tail -20 "$scratch/check.err"; }
  ok "$version as $user: check passes (rc=$rc)" [ "$rc" -eq 0 ]
done

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
