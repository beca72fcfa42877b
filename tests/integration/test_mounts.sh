#!/usr/bin/env bash
# Leaks through mounts that the host's look must find whatever the kernel's own mount table shows:
# a leak kept in another mount namespace of the sandbox, a filesystem shared with a namespace
# outside it, a read-only mount that allows devices, another team's or another run's folders bound
# in, a hard link to a canary. Each runs a real bwrap stand-in (tests/fixtures/leaky-bwrap) and
# expects the check that covers it to fail with exit 1, naming the mount.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 unshare nsenter setpriv

# detail FILE CHECK_ID [KERNEL_INDEX]: the check's detail and problems.
detail() {
  json_get "$1" "' | '.join([c['detail']] + c['evidence'].get('problems', [])) if (c := next((c for c in d['kernels'][${3:-0}]['checks'] if c['id']=='$2'), None)) else 'missing'"
}

# expect_leak LABEL CHECK_ID PATTERN KERNEL [check options...]: exit 1, CHECK_ID fails naming PATTERN.
# KBOUND_AS (a command prefix) runs kbound as another user.
expect_leak() {
  local label=$1 id=$2 pattern=$3 kernel=$4
  shift 4
  set +e
  ${KBOUND_AS:-} "${KBOUND_AS_BIN:-$KBOUND}" check --quiet --kernel "$kernel" --json "$reports/$label.json" "$@" \
    >"$scratch/$label.out" 2>"$scratch/$label.err"
  local rc=$?
  set -e
  ok "$label: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
  [ "$rc" -eq 1 ] || tail -5 "$scratch/$label.err"
  local got
  got=$(detail "$reports/$label.json" "$id")
  ok "$label: $id fails" [ "$(json_get "$reports/$label.json" "d['kernels'][0]['checks'][[c['id'] for c in d['kernels'][0]['checks']].index('$id')]['status']")" = "fail" ]
  ok "$label: $id names '$pattern'" grep -qF -- "$pattern" <<<"$got"
  grep -qF -- "$pattern" <<<"$got" || echo "    got: $got"
}

reports="$scratch/reports"
mkdir -m 1777 "$reports"

echo "kbound's base folder bound writable, covered in the kernel's own mount namespace, kept in another"
spec="$scratch/kernels/nested"
mkdir -p "$spec"
printf '{"argv": ["%s", "/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "nested", "language": "python", "interrupt_mode": "signal"}\n' \
  "$fixtures/nested-kernel" >"$spec/kernel.json"
chmod -R a+rX "$scratch/kernels"
expect_leak nested boundary.write_outside "a writable mount at /mnt/hostleak (" "$spec" --ro-bind "$fixtures" \
  --bwrap "$(leaky_bwrap nested)" --allow-syscall unshare --allow-syscall mount
json_read got "$reports/nested.json" \
  "[' | '.join([c['detail']] + c['evidence']['problems']) for c in d['kernels'][0]['checks'] if c['id']=='boundary.write_outside'][0]"
ok "nested: named in the mount namespace it is kept in" grep -qE "in the mount namespace of pid [0-9]+ \(bwrap\): a writable mount at /mnt/hostleak \(.*\) is backed by the host" <<<"$got"
ok "nested: the kernel's own table shows no leak (the cover worked)" \
  bash -c '! grep -qF "| a writable mount at /mnt/hostleak" <<<"$1"' _ "$got"
ok "nested: the credential file is found through that namespace's mounts" \
  grep -qE "reachable in the sandbox at /mnt/hostleak/host-secrets/credentials \(in the mount namespace of pid [0-9]+\)" \
  <<<"$(detail "$reports/nested.json" boundary.credentials)"
ok "nested: and the other team's canary" grep -qF "(in the mount namespace of pid" <<<"$(detail "$reports/nested.json" boundary.cross_team)"

echo "a tmpfs of a mount namespace outside the sandbox, bound writable"
expect_leak sharedtmpfs boundary.write_outside \
  "a writable mount at /mnt/shared (tmpfs tmpfs, root /) is not the sandbox's own: the mount namespace of pid" \
  python3 --bwrap "$(leaky_bwrap sharedtmpfs)"

echo "a read-only folder holding a device node, bound with devices allowed"
if [ "$(id -u)" -eq 0 ]; then
  # Only root can make a device node: a read-only tmpfs holding one nobody may open (mode 000).
  mkdir "$scratch/rodev"
  mount -t tmpfs -o size=64k,mode=755 tmpfs "$scratch/rodev"
  mknod -m 000 "$scratch/rodev/kmsg" c 1 11
  mount -o remount,ro "$scratch/rodev"
  expect_leak rodev boundary.write_outside \
    "a mount at /mnt/rodev (tmpfs tmpfs, root /) lets device nodes be opened (no nodev)" \
    python3 --bwrap "$(leaky_bwrap rodev "$scratch/rodev")"
  umount "$scratch/rodev"
else
  echo "  (not root: making a device node needs root; the rule is unit-tested on canned facts)"
fi

echo "another kbound run's team folder (kept with --keep) bound in"
other="$KBOUND_RUNTIME_DIR/kbound-Other1"
mkdir -p "$other/teams/t/run"
touch "$other/.kbound-kept"
chmod -R a+rX "$other"
expect_leak otherrun boundary.cross_team \
  "the sandbox's mount at /mnt/other-run shows $other/teams/t/run, in another kbound run's folder" \
  python3 --bwrap "$(leaky_bwrap otherrun "$other/teams/t/run")"
rm -rf "$other"

echo "this run's other team's runtime folder bound in (two kernels at once)"
set +e
"$KBOUND" check --quiet --kernel python3 --kernel python3 --json "$reports/otherteam.json" \
  --bwrap "$(leaky_bwrap otherteam "kbound-python3-1 kbound-python3-2")" >"$scratch/otherteam.out" 2>"$scratch/otherteam.err"
rc=$?
set -e
ok "otherteam: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
for i in 0 1; do
  got=$(detail "$reports/otherteam.json" boundary.cross_team "$i")
  ok "otherteam: kernel $i's cross_team names the other team's runtime folder" \
    grep -qE "the sandbox's mount at /mnt/teams/kbound-python3-[12] shows .*/teams/kbound-python3-[12]/run: a team folder that is not the kernel's own" <<<"$got"
done

echo "a hard link to kbound's credential file in a folder bound read-only (kbound not root)"
if [ "$(id -u)" -eq 0 ]; then
  user=$(test_user)
  chmod 1777 "$KBOUND_RUNTIME_DIR"
  KBOUND_AS="runuser -u $user -- env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 KBOUND_RUNTIME_DIR=$KBOUND_RUNTIME_DIR"
  KBOUND_AS_BIN=$(user_kbound)
else
  user=$(id -un)
  KBOUND_AS=""
fi
mkdir "$scratch/export"
chown "$user" "$scratch/export"
expect_leak hardlink boundary.credentials \
  "credentials has 2 names (hard links) and the sandbox's mount at" python3 \
  --bwrap "$(leaky_bwrap hardlink "$scratch/export")"
KBOUND_AS="" KBOUND_AS_BIN=""
rm -rf "$scratch/export"
echo "a read-only bind of a host folder that holds no canary, the runtime folder outside it (issue 35)"
# CI jobs often put kbound's runtime folder elsewhere (TMPDIR, KBOUND_RUNTIME_DIR): then no canary of
# kbound's lies under the host's /tmp (nor ever under /etc), and only the mount table shows the bind.
# The mount is matched against the plan whatever lies under it: sandbox.backend names it, in the look
# before the kernel ran and in every later one.
elsewhere=$(mktemp -d /var/tmp/kbt-XXXXXX)
chmod 755 "$elsewhere"
cleanup_paths+=("$elsewhere")
for folder in /tmp /etc; do
  label="robind${folder//\//-}"
  KBOUND_RUNTIME_DIR=$elsewhere expect_leak "$label" sandbox.backend \
    "a mount at /mnt/host-ro (" python3 --bwrap "$(leaky_bwrap robind "$folder")"
  got=$(detail "$reports/$label.json" sandbox.backend)
  ok "$label: named by what it shows, the host's $folder read-only, as not planned" \
    grep -qE "a mount at /mnt/host-ro \([^ ]+ [^ ]+, root $folder, read-only\) that kbound did not plan" <<<"$got"
  ok "$label: before the kernel ran too" grep -qF "before the kernel ran: a mount at /mnt/host-ro (" <<<"$got"
  grep -qF "before the kernel ran: a mount at /mnt/host-ro (" <<<"$got" || echo "    got: $got"
  ok "$label: no canary lies under it (boundary.credentials passes: the canaries are elsewhere)" \
    [ "$(check_status "$reports/$label.json" python3 boundary.credentials)" = "pass" ]
  ok "$label: read-only and nodev, it widens no write (boundary.write_outside passes)" \
    [ "$(check_status "$reports/$label.json" python3 boundary.write_outside)" = "pass" ]
  ok "$label: nothing left in the runtime folder" [ -z "$(ls -A "$elsewhere")" ]
done
assert_no_leftovers "after the mount leaks"
finish
