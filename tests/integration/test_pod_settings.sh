#!/usr/bin/env bash
# docs/ci.md's Kubernetes recipe: the pod security settings its indexed Job gives kbound, proven by
# running kbound in a rootless podman container set up the same way (no Kubernetes cluster runs
# here). The settings are read from the page's Job and each is given to podman as its equivalent;
# one the test does not know fails it. In that container `kbound doctor` passes and `kbound check
# --image` of the test image, as the Job runs it, passes every check; without the seccomp setting,
# or without the unmasked /proc, doctor fails naming why (each is needed); a check of the
# container's own kernel fails boundary.credentials while HOSTNAME is in kbound's environment and
# passes without it (what the page says to do then). The container's
# root is the test image (make-image) with this build of kbound, bubblewrap, skopeo and umoci added.
# podman runs as a user of this test's own, deleted at its end with every process it left (podman's
# pause process).
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "FATAL: test_pod_settings makes a user of its own for rootless podman and builds the test image with" \
    "mmdebstrap: run the tests as root (CI does)" >&2
  exit 1
fi
require podman runc newuidmap newgidmap umoci skopeo mmdebstrap bwrap useradd runuser ldd /usr/bin/python3
if ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  echo "FATAL: test_pod_settings reads docs/ci.md's Job with python3-yaml; run scripts/setup" >&2
  exit 1
fi
: "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}"

# The settings: docs/ci.md's Job, as podman options (one per line), or the test fails naming what it
# does not know.
/usr/bin/python3 - "$KBOUND_SOURCE_DIR/docs/ci.md" >"$scratch/settings" 2>"$scratch/settings.err" <<'PY' ||
import re, sys, yaml
doc = open(sys.argv[1]).read()
jobs = [y for y in (yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", doc, re.S))
        if isinstance(y, dict) and y.get("kind") == "Job"]
assert len(jobs) == 1, f"docs/ci.md has {len(jobs)} Kubernetes Jobs, not one"
pod = jobs[0]["spec"]["template"]["spec"]
(c,) = pod["containers"]
out, unknown = [], []
# The pod's own keys: those about where it runs, or what it is not given, need no podman option.
for k, v in pod.items():
    if k == "hostUsers" and v is False:
        pass  # rootless podman: the container is in a user namespace of its own
    elif k in ("restartPolicy", "containers", "volumes", "securityContext"):
        pass
    elif (k, v) in (("automountServiceAccountToken", False), ("enableServiceLinks", False)):
        pass  # nothing to mount or set: podman gives neither
    else:
        unknown.append(f"pod.{k}")
ctx = dict(pod.get("securityContext") or {})
ctx.update(c.get("securityContext") or {})
user, group = ctx.pop("runAsUser", None), ctx.pop("runAsGroup", None)
if user is not None:
    out.append(f"--user={user}:{group if group is not None else user}")
for k, v in ctx.items():
    if k == "runAsNonRoot" and v is True:
        assert user, "runAsNonRoot without runAsUser"
    elif k == "fsGroup":
        pass  # the test's volumes are the container user's own
    elif k == "allowPrivilegeEscalation" and v is False:
        out.append("--security-opt=no-new-privileges")
    elif k == "capabilities" and v == {"drop": ["ALL"]}:
        out.append("--cap-drop=ALL")
    elif k == "readOnlyRootFilesystem" and v is True:
        out.append("--read-only")
    elif k == "seccompProfile" and v == {"type": "Unconfined"}:
        out.append("--security-opt=seccomp=unconfined")
    elif k == "procMount" and v == "Unmasked":
        out.append("--security-opt=unmask=/proc/*")
    elif k == "appArmorProfile" and v == {"type": "Unconfined"}:
        out.append("--security-opt=apparmor=unconfined")
    else:
        unknown.append(f"securityContext.{k}: {v}")
for e in c.get("env") or []:
    out.append(f"--env={e['name']}={e['value']}")
assert not unknown, f"settings this test cannot give podman: {unknown}"
print("\n".join(out))
PY
  { cat "$scratch/settings.err" >&2; echo "FATAL: cannot read the Job's settings from docs/ci.md" >&2; exit 1; }
mapfile -t settings <"$scratch/settings"
echo "the Job's settings as podman options: ${settings[*]}"
ok "the Job runs kbound as a non-root user" grep -qx -- "--user=1000:1000" "$scratch/settings"
for needed in --security-opt=seccomp=unconfined "--security-opt=unmask=/proc/*"; do
  ok "the Job gives $needed's equivalent" grep -qxF -- "$needed" "$scratch/settings"
done
without() { local drop=$1 s; for s in "${settings[@]}"; do [ "$s" = "$drop" ] || echo "$s"; done; }

# A user of this test's own for rootless podman, with subordinate ids.
pod_user=kbpod-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
pod_home=$scratch/pod-home
end_test() {
  cleanup_test
  if id "$pod_user" >/dev/null 2>&1; then
    # Every process of this user is this test's (podman's pause process among them).
    for _ in 1 2 3 4 5 6 7 8 9 10; do pkill -KILL -u "$pod_user" 2>/dev/null || break; sleep 0.2; done
    userdel "$pod_user" 2>/dev/null || echo "test_pod_settings: could not delete its user $pod_user" >&2
  fi
}
trap end_test EXIT
useradd --create-home --home-dir "$pod_home" --shell /bin/bash "$pod_user"
if ! grep -q "^$pod_user:" /etc/subuid || ! grep -q "^$pod_user:" /etc/subgid; then
  echo "FATAL: useradd gave $pod_user no subordinate ids (/etc/subuid, /etc/subgid): rootless podman needs them" >&2
  exit 1
fi
chmod 755 "$scratch"
# From the pod user's home: the build folder ctest runs in may be one that user cannot enter (a clone
# in root's 0700 home), and podman's runtime changes to the current folder.
as_pod() { (cd "$pod_home" && runuser -u "$pod_user" -- env -i HOME="$pod_home" PATH=/usr/bin:/bin LANG=C.UTF-8 \
  XDG_RUNTIME_DIR="$pod_home/run" "$@"); }
as_pod mkdir -m 700 "$pod_home/run"

echo "the container's root: the test image, with kbound, bubblewrap, skopeo and umoci"
images=$("$KBOUND_SOURCE_DIR/tests/fixtures/make-image")
install -d -m 755 "$scratch/images"
install -m 644 "$images/image-oci.tar" "$scratch/images/image-oci.tar"
rootfs=$pod_home/rootfs
cp -R "$images/layout" "$scratch/layout"
chmod -R a+rX "$scratch/layout"
as_pod umoci raw unpack --rootless --image "$scratch/layout:kbound-test" "$rootfs" >/dev/null
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$KBOUND_BUILD_DIR/CMakeCache.txt")
DESTDIR=$scratch/install cmake --install "$KBOUND_BUILD_DIR" --prefix "$prefix" >/dev/null
# copy_in PATH: a host file at the same path in the root, through its links (merged /usr: /lib is
# usr/lib), and, for a program or library, every library it loads.
copy_in() {
  local path=$1 canon
  canon=$(realpath -s "$path")
  case $canon in /lib/* | /lib64/* | /bin/* | /sbin/*) canon=/usr$canon ;; esac
  if [ ! -e "$rootfs$canon" ] && [ ! -L "$rootfs$canon" ]; then
    mkdir -p "$rootfs$(dirname "$canon")"
    cp -a "$canon" "$rootfs$canon"
  fi
  if [ -L "$canon" ]; then
    local target
    target=$(readlink "$canon")
    case $target in /*) copy_in "$target" ;; *) copy_in "$(dirname "$canon")/$target" ;; esac
  fi
}
copy_libs() { # copy_libs PROGRAM [LIBRARY-PATH]
  local lib
  for lib in $(LD_LIBRARY_PATH=${2:-} ldd "$1" 2>/dev/null | awk '/=> \// {print $3}'); do
    case $lib in "$scratch"/*) ;; *) copy_in "$lib" ;; esac
  done
}
cp -a "$scratch/install$prefix/." "$rootfs$prefix/"
for program in /usr/bin/bwrap /usr/bin/skopeo /usr/bin/umoci; do
  copy_in "$program"
  copy_libs "$program"
done
copy_libs "$scratch/install$prefix/bin/kbound" "$scratch/install$prefix/lib:$scratch/install$prefix/lib/$(gcc -print-multiarch 2>/dev/null)"
chown -R "$pod_user": "$rootfs"
chmod -R a+rX "$rootfs"
chmod 755 "$rootfs"
install -d -m 1777 -o "$pod_user" "$scratch/reports" "$scratch/work"

# pod NAME ARGS... -- COMMAND...: kbound's container as the Job has it (with the options given),
# its rc in $rc, its output in $scratch/NAME.out.
pod() {
  local name=$1 opts=()
  shift
  while [ "$1" != -- ]; do
    opts+=("$1")
    shift
  done
  shift
  set +e
  as_pod podman --storage-driver vfs --runtime runc --cgroup-manager cgroupfs --events-backend file \
    run --rm --network none "${opts[@]}" -v "$scratch/work:/work" -v "$scratch/reports:/reports" \
    -v "$scratch/images:/images:ro" --rootfs "$rootfs" "$@" >"$scratch/$name.out" 2>&1
  rc=$?
  set -e
}
kbound_in=$prefix/bin/kbound

echo "the Job's settings: kbound can enforce its sandbox, and an image's kernel passes every check"
pod doctor "${settings[@]}" -- "$kbound_in" doctor
ok "doctor passes (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat "$scratch/doctor.out" >&2
pod check "${settings[@]}" -- "$kbound_in" check --image /images/image-oci.tar --kernel python3 \
  --require-full-boundary --json /reports/pass.json
ok "kbound check --image, as the Job runs it: exit 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -30 "$scratch/check.out" >&2
ok "  ... its report passes, every check" [ "$(json_get "$scratch/reports/pass.json" \
  "(d['verdict'], sorted({c['status'] for k in d['kernels'] for c in k['checks']}))")" = "('pass', ['pass'])" ]
ok "  ... the kernel ran from the image, as the container's user" [ "$(json_get "$scratch/reports/pass.json" \
  "(d['sandbox']['image']['tag'], d['sandbox']['user']['uid'], d['sandbox']['user']['switched_from_root'])")" = \
  "('kbound-test', 1000, False)" ]

echo "each loosened setting is needed"
mapfile -t fewer < <(without --security-opt=seccomp=unconfined)
pod noseccomp "${fewer[@]}" -- "$kbound_in" doctor
ok "without seccompProfile: Unconfined doctor fails (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... bwrap refused a call the default profile denies" \
  grep -qE "bwrap: (Can't set hostname|Creating new namespace failed|setting up uid map).*Operation not permitted" <(unwrapped "$scratch/noseccomp.out")
mapfile -t fewer < <(without "--security-opt=unmask=/proc/*")
pod masked "${fewer[@]}" -- "$kbound_in" doctor
ok "without procMount: Unmasked doctor fails (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... bwrap could not mount its /proc" grep -qF "Can't mount proc on /newroot/proc: Operation not permitted" \
  <(unwrapped "$scratch/masked.out")

echo "a kernel of the container itself (no --image): HOSTNAME must leave kbound's environment"
credentials() { json_get "$scratch/reports/$1.json" \
  "next(c['status'] + ' ' + c['detail'] for k in d['kernels'] for c in k['checks'] if c['id'] == 'boundary.credentials')"; }
pod hostname "${settings[@]}" -- "$kbound_in" check --kernel python3 --json /reports/hostname.json
ok "with HOSTNAME, boundary.credentials fails: the pod's name is in /etc/hostname too (rc=$rc)" \
  grep -qF "fail env:HOSTNAME reached the sandbox" <<<"$(credentials hostname)"
pod nohostname "${settings[@]}" -- /usr/bin/env -u HOSTNAME "$kbound_in" check --kernel python3 \
  --json /reports/nohostname.json
ok "with env -u HOSTNAME the check passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "  ... boundary.credentials with it ($(credentials nohostname | cut -c1-30))" [ "$(credentials nohostname | cut -d' ' -f1)" = pass ]
assert_no_leftovers "after the pods"
finish
