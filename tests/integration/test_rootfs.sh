#!/usr/bin/env bash
# --rootfs: kernels of an unpacked image (tests/fixtures/make-rootfs builds one from this machine's
# Debian packages, cached): found inside the image, run from it, checked end to end; broken kernels
# and things that are not images fail with clear messages.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 ldd flock # and ldconfig, which make-rootfs finds in /usr/sbin

if [ "$(id -u)" -eq 0 ]; then
  export KBOUND_ROOTFS_CACHE=${KBOUND_ROOTFS_CACHE:-/var/cache/kbound-test-rootfs}
fi
image=$("$KBOUND_SOURCE_DIR/tests/fixtures/make-rootfs")
ok "the test image exists ($image)" test -d "$image/usr/lib/python3.11"
marker=$(cat "$image/etc/kbound-image-marker")

echo "check --rootfs (python3 from the image)"
set +e
"$KBOUND" check --rootfs "$image" --kernel python3 --json "$scratch/r.json" --junit "$scratch/r.xml" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
cat "$scratch/out"
[ "$rc" -eq 0 ] || tail -20 "$scratch/err"
ok "check passes end to end (rc=$rc)" [ "$rc" -eq 0 ]
ok "every check passes ($(json_get "$scratch/r.json" "len(d['kernels'][0]['checks'])") of them)" \
  [ "$(json_get "$scratch/r.json" "[len(d['kernels'][0]['checks']) >= 12, sum(c['status']!='pass' for c in d['kernels'][0]['checks'])]")" = "[True, 0]" ]
ok "the JSON report names the rootfs" [ "$(json_get "$scratch/r.json" "d['sandbox']['rootfs']")" = "$image" ]
ok "the kernelspec is the image's" [ "$(json_get "$scratch/r.json" "d['kernels'][0]['display_name']")" = "Python 3 (image)" ]
ok "its resource_dir is the path inside the image" \
  [ "$(json_get "$scratch/r.json" "d['kernels'][0]['resource_dir']")" = "/usr/share/jupyter/kernels/python3" ]
ok "the human report names the rootfs" grep -qF "root:    image $image" "$scratch/out"
ok "the JUnit report names the rootfs" grep -qF "<property name=\"rootfs\" value=\"$image\"/>" "$scratch/r.xml"
"$KBOUND" check --kernel python3 --json "$scratch/host.json" >/dev/null 2>&1 || true
ok "without --rootfs the report says the host's paths" [ "$(json_get "$scratch/host.json" "d['sandbox']['rootfs']")" = "None" ]

echo "conformance --rootfs (the image's python3)"
set +e
"$KBOUND" conformance --rootfs "$image" --kernel python3 --json "$scratch/conf.json" --transcript "$scratch/conf.jsonl" \
  >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
# (a clean-clone run once failed its shutdown item, "the kernel process died": the messages say
# whether a shutdown_reply ever came, and when)
[ "$rc" -eq 0 ] || { cat "$scratch/out"; tail -20 "$scratch/err"; print_transcript "$scratch/conf.jsonl"; }
ok "conformance of the image's kernel passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "the conformance report names the rootfs" [ "$(json_get "$scratch/conf.json" "d['sandbox']['rootfs']")" = "$image" ]
ok "the conformance report tested the image's kernelspec" \
  [ "$(json_get "$scratch/conf.json" "d['kernels'][0]['display_name']")" = "Python 3 (image)" ]
ok "no conformance item failed" \
  [ "$(json_get "$scratch/conf.json" "sum(c['status']=='fail' for c in d['kernels'][0]['checks'])")" = "0" ]

echo "run --rootfs: the kernel really runs from the image"
out=$("$KBOUND" run --rootfs "$image" --kernel python3 'print(open("/etc/kbound-image-marker").read().strip())')
ok "the cell reads the image's marker (got '$out')" [ "$out" = "$marker" ]
ok "the host has no such marker" [ ! -e /etc/kbound-image-marker ]
out=$("$KBOUND" run --rootfs "$image" --kernel python3 'import os; print(os.path.exists("/usr/share/jupyter/kernels/ir"), os.path.exists("/usr/bin/R"))')
ok "host-only files are absent inside (got '$out')" [ "$out" = "False False" ]
out=$("$KBOUND" run --rootfs "$image" --kernel python3 'import os; print(" ".join(sorted(os.listdir("/usr/bin"))))')
ok "/usr/bin is the image's (got '$out')" [ "$out" = "$(ls "$image/usr/bin" | sort | tr '\n' ' ' | sed 's/ $//')" ]
out=$("$KBOUND" run --rootfs "$image" --kernel python3 '
import errno
for p in ("/usr/kbound-w", "/etc/kbound-w", "/kbound-w"):
    try:
        open(p, "w").close(); print(p, "written")
    except OSError as e:
        print(p, errno.errorcode[e.errno])')
echo "$out"
ok "the image is read-only inside" [ "$(echo "$out" | grep -c EROFS)" = "3" ]
ok "and nothing landed in the image" test ! -e "$image/usr/kbound-w" -a ! -e "$image/etc/kbound-w"
out=$("$KBOUND" run --rootfs "$image" --kernel /usr/share/jupyter/kernels/python3 'print(6*7)')
ok "--kernel PATH is a folder inside the image (got '$out')" [ "$out" = "42" ]

echo "a sandbox that mounts the image read-write is caught"
# A private copy (hard links: instant); the probe only creates new files, never opens existing ones.
cp -al "$image" "$scratch/rwimage"
# As root the kernel runs as the sandbox user: give it the image's /usr folder (not the files, which
# are hard links), as an image unpacked by the user running kbound would be.
[ "$(id -u)" -ne 0 ] || chown "$(sandbox_user):" "$scratch/rwimage/usr"
set +e
KBOUND_BWRAP="$(leaky_bwrap rootfs)" \
  "$KBOUND" check --rootfs "$scratch/rwimage" --kernel python3 --json "$scratch/leak.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "check fails with exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
ok "boundary.write_outside fails" [ "$(check_status "$scratch/leak.json" python3 boundary.write_outside)" = "fail" ]
ok "  ... naming the write into the image" grep -qF "the host sees the cell's file at $scratch/rwimage/usr/kbound-escape-" \
  <<<"$(json_get "$scratch/leak.json" "[c for c in d['kernels'][0]['checks'] if c['id']=='boundary.write_outside'][0]['evidence']['problems']")"
ok "  ... and the stray file was removed" bash -c "! ls '$scratch/rwimage/usr' | grep -q kbound-escape"
rm -rf "$scratch/rwimage"

echo "broken kernels in an image"
expect_fail() { # expect_fail NAME RC PATTERN COMMAND...
  local name=$1 want=$2 pattern=$3
  shift 3
  set +e
  "$@" >"$scratch/bout" 2>"$scratch/berr"
  local got=$?
  set -e
  ok "$name: exit $want (got $got)" [ "$got" -eq "$want" ]
  ok "$name: says '$pattern'" grep -qF -- "$pattern" "$scratch/berr"
  [ "$got" -eq "$want" ] && grep -qF -- "$pattern" "$scratch/berr" || cat "$scratch/berr" >&2
}
expect_fail "program missing in the image (run)" 3 \
  "kernel 'missing-program' in image $image: its program /usr/bin/python9 does not exist in the image (no $image/usr/bin/python9)" \
  "$KBOUND" run --rootfs "$image" --kernel missing-program '1'
expect_fail "program missing in the image (check)" 3 "/usr/bin/python9 does not exist in the image" \
  "$KBOUND" check --rootfs "$image" --kernel missing-program
expect_fail "python without ipykernel (run)" 3 "No module named kbound_no_such_kernel" \
  "$KBOUND" run --rootfs "$image" --kernel no-ipykernel '1'
ok "  ... and names the kernel and the image" grep -qF "kernel 'no-ipykernel' in image $image: cannot start" "$scratch/berr"
set +e
"$KBOUND" check --rootfs "$image" --kernel no-ipykernel --json "$scratch/b.json" >"$scratch/bout" 2>"$scratch/berr"
rc=$?
set -e
ok "python without ipykernel (check): exit 3 (got $rc)" [ "$rc" -eq 3 ]
ok "  ... the report says why" grep -q "No module named kbound_no_such_kernel" <<<"$(json_get "$scratch/b.json" "d['kernels'][0]['error']")"
ok "  ... and is a failure" [ "$(json_get "$scratch/b.json" "d['verdict']")" = "fail" ]
expect_fail "host kernelspecs are never used" 3 "kernel 'ir': no kernelspec in image $image" \
  "$KBOUND" run --rootfs "$image" --kernel ir 'cat(1)'
expect_fail "a link to the host's kernelspec resolves inside the image" 3 "kernel 'hostir': no kernelspec in image" \
  "$KBOUND" run --rootfs "$image" --kernel hostir 'cat(1)'
expect_fail "a relative kernel folder" 2 "absolute path inside the image" \
  "$KBOUND" run --rootfs "$image" --kernel usr/share/jupyter/kernels/python3 '1'

echo "kernelspecs --rootfs and check's default kernels"
out=$("$KBOUND" kernelspecs --rootfs "$image" | awk '{print $1}' | tr '\n' ' ')
ok "kernelspecs --rootfs lists the image's kernels only (got '$out')" [ "$out" = "missing-program no-ipykernel python3 " ]
out=$("$KBOUND" kernelspecs --rootfs "$image" --json)
ok "  ... with their paths inside the image" grep -q '"resource_dir":"/usr/share/jupyter/kernels/python3"' <<<"$out"
expect_fail "check --rootfs without --kernel checks the image's kernels" 3 "kernel 'missing-program' in image $image" \
  "$KBOUND" check --rootfs "$image"
# A copy (hard links; only new files are written) whose other kernels are good, plus one
# kernelspec whose kernel.json does not parse: the image cannot pass while one of its kernels
# goes unchecked.
cp -al "$image" "$scratch/brokenimage"
rm -rf "$scratch/brokenimage/usr/share/jupyter/kernels/missing-program" \
  "$scratch/brokenimage/usr/share/jupyter/kernels/no-ipykernel"
mkdir "$scratch/brokenimage/usr/share/jupyter/kernels/zbroken"
echo '{not json' >"$scratch/brokenimage/usr/share/jupyter/kernels/zbroken/kernel.json"
for cmd in check conformance; do
  expect_fail "$cmd --rootfs with an unparseable kernelspec in the image" 3 \
    "kernel 'zbroken' in image $scratch/brokenimage: its kernelspec cannot be loaded: /usr/share/jupyter/kernels/zbroken/kernel.json: not valid JSON (line 1, column 2: " \
    "$KBOUND" "$cmd" --rootfs "$scratch/brokenimage" --json "$scratch/broken-$cmd.json"
  ok "  ... and says nothing of the image was checked" \
    grep -qF "image $scratch/brokenimage: not every kernelspec of the image can be checked, so none was" "$scratch/berr"
  ok "  ... no PASS anywhere" bash -c "! grep -q '^PASS' '$scratch/bout'"
  ok "  ... and a report that cannot be read as one: refused, failing, every kernel's every check not run" /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["refused"] is True and r["verdict"] == "fail" and r["exit_code"] == 3, r
why = "not every kernelspec of the image can be checked"
assert why in r["incomplete_reason"], r["incomplete_reason"]
# The image'"'"'s kernelspecs, the broken one included, each listed with its start failed and every
# check (or item) not run, naming the refusal: a CI'"'"'s history keeps them.
assert sorted(k["name"] for k in r["kernels"]) == ["python3", "zbroken"], [k["name"] for k in r["kernels"]]
for k in r["kernels"]:
    assert k["start"]["status"] == "fail" and why in k["error"], k["start"]
    assert k["checks"] and all(c["status"] == "not_run" and why in c["detail"] for c in k["checks"]), k["name"]' "$scratch/broken-$cmd.json"
done
rm -rf "$scratch/brokenimage"
# More kernelspecs than kbound checks at once: an explicit usage error, never a silent drop.
cp -al "$image" "$scratch/manyimage"
for i in $(seq -w 0 32); do
  mkdir "$scratch/manyimage/usr/share/jupyter/kernels/many$i"
  cp "$image/usr/share/jupyter/kernels/python3/kernel.json" "$scratch/manyimage/usr/share/jupyter/kernels/many$i/"
done
for cmd in check conformance; do
  expect_fail "$cmd --rootfs with 36 kernelspecs" 2 \
    "image $scratch/manyimage has 36 kernelspecs, more than the 32 kbound checks at once" \
    "$KBOUND" "$cmd" --rootfs "$scratch/manyimage"
done
rm -rf "$scratch/manyimage"
mkdir -p "$scratch/emptyimage/usr"
expect_fail "an image without kernelspecs" 3 "image $scratch/emptyimage has no kernelspec" \
  "$KBOUND" check --rootfs "$scratch/emptyimage"

echo "things that are not images"
mkdir -p "$scratch/notroot/etc" "$scratch/linkroot"
ln -s /usr "$scratch/linkroot/usr"
expect_fail "no usr/" 2 "not a root filesystem: it has no usr/ directory" \
  "$KBOUND" check --rootfs "$scratch/notroot" --kernel python3
expect_fail "usr is a link to the host's" 2 "its usr is a symlink" \
  "$KBOUND" run --rootfs "$scratch/linkroot" --kernel python3 '1'
expect_fail "no such folder" 2 "--rootfs $scratch/nothing-here" \
  "$KBOUND" run --rootfs "$scratch/nothing-here" --kernel python3 '1'
expect_fail "--rootfs without the sandbox" 2 "--rootfs needs the sandbox" \
  "$KBOUND" run --rootfs "$image" --sandbox off --kernel python3 '1'

if [ "$(id -u)" -eq 0 ]; then
  tuser=$(test_user)
  echo "as $tuser: run --rootfs"
  chmod 1777 "$KBOUND_RUNTIME_DIR"
  out=$(runuser -u "$tuser" -- env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 \
    KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$(user_kbound)" run --rootfs "$image" --kernel python3 \
    'import os; print(os.getpid(), open("/etc/kbound-image-marker").read().strip())')
  ok "unprivileged: PID 2 and the image's marker (got '$out')" [ "$out" = "2 $marker" ]
  chmod 755 "$scratch"
  mkdir -m 1777 "$scratch/ureports"
  set +e
  runuser -u "$tuser" -- env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 \
    KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$(user_kbound)" check --rootfs "$image" --kernel python3 \
    --json "$scratch/ureports/u.json" >"$scratch/out" 2>"$scratch/err"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || { cat "$scratch/out"; tail -20 "$scratch/err"; }
  ok "unprivileged: check --rootfs passes (rc=$rc)" [ "$rc" -eq 0 ]
  ok "unprivileged: the kernel ran as $tuser" \
    [ "$(json_get "$scratch/ureports/u.json" "d['kernels'][0]['process']['uid']")" = "$(id -u "$tuser")" ]
fi
assert_no_leftovers "after the rootfs runs"
finish
