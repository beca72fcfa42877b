#!/usr/bin/env bash
# Every reference a sandbox process holds, every moment, every claim by effect (issue 22's cases),
# against real bubblewrap builds with one bug each (tests/fixtures/get-bwrap) and against host tools
# entering the running sandbox (tests/fixtures/enter-sandbox, inject-mount): each fails the check
# that covers it, exit 1, naming the pid and the object; as root and as an ordinary user.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R apt-get dpkg-deb flock runuser pgrep

user=$(test_user)
chmod 1777 "$KBOUND_RUNTIME_DIR"
mkdir -m 1777 "$scratch/reports"
# runs: "root" (kernels run as kbound-sandbox) and the ordinary user, when the tests run as root
runs=(self)
[ "$(id -u)" -eq 0 ] && runs+=("$user")
as() { # as RUN COMMAND...
  if [ "$1" = self ]; then
    shift
    "$@"
  else
    local who=$1
    shift
    runuser -u "$who" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 \
      KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$@"
  fi
}
kbound_for() { # the kbound a run runs
  if [ "$1" = self ]; then echo "$KBOUND"; else user_kbound; fi
}
sandbox_user_of() { # the user a run's kernels run as
  if [ "$1" != self ]; then echo "$1"; else sandbox_user; fi
}
detail_of() { # detail_of REPORT KERNEL CHECK
  json_get "$1" "[c['detail'] + ' | ' + ' | '.join(c['evidence'].get('problems', [])) for k in d['kernels'] if k['name'] == '$2' for c in k['checks'] if c['id'] == '$3'][0]"
}

# Twins (kbound-syscall-probe --pause, kb_sandbox_lifetime) whose bwrap init lost its parent: a
# twin kbound did not stop. Other tests' checks have twins of their own for a moment, each with
# its bwrap still there.
orphaned_twins() {
  local p init
  for p in $(pgrep -f "kbound-tools/syscall-probe --pause" || true); do
    init=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
    [ -n "$init" ] && [ "$(awk '/^PPid:/ {print $2}' "/proc/$init/status" 2>/dev/null)" = 1 ] && echo "$p"
  done
}

# A bwrap that leaves init and the kernel with its own host working directory (runc's CVE-2024-21626
# shape): IRkernel starts and fails boundary.descriptors; ipykernel dies at start-up, and the report
# names what the host saw before it ran.
leakcwd=$(get_bwrap 0.12.0+bug-leakcwd)
nodwp=$(get_bwrap 0.12.0+bug-nodiewithparent)
latearm=$(get_bwrap 0.12.0+bug-latearm)
for run in "${runs[@]}"; do
  set +e
  (cd "$scratch" && as "$run" "$(kbound_for "$run")" check --bwrap "$leakcwd" --json "$scratch/reports/leakcwd-$run.json") \
    >"$scratch/out" 2>"$scratch/err"
  rc=$?
  set -e
  r=$scratch/reports/leakcwd-$run.json
  ok "$run, leakcwd: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
  ok "$run, leakcwd: ir fails boundary.descriptors" [ "$(check_status "$r" ir boundary.descriptors)" = fail ]
  ok "$run, leakcwd: naming the working directory, the pid and the mount" \
    grep -qE "the working directory of pid [0-9]+ \((bwrap|R)\), $scratch \(dev [0-9:]+, inode [0-9]+\), is on mount [0-9]+, which is not one of the sandbox's" \
    <<<"$(detail_of "$r" ir boundary.descriptors)"
  ok "$run, leakcwd: python3's start-up failure names what the host saw first" \
    grep -qF "before the kernel ran, the host saw the working directory of pid" <<<"$(detail_of "$r" python3 sandbox.backend)"

  # A bwrap that ignores --die-with-parent: the twin sandbox outlives its bwrap.
  set +e
  as "$run" "$(kbound_for "$run")" check --kernel python3 --bwrap "$nodwp" --json "$scratch/reports/nodwp-$run.json" \
    >"$scratch/out" 2>"$scratch/err"
  rc=$?
  set -e
  r=$scratch/reports/nodwp-$run.json
  ok "$run, nodiewithparent: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
  ok "$run, nodiewithparent: sandbox.session fails by effect" \
    grep -qF "outlived its bwrap" <<<"$(detail_of "$r" python3 sandbox.session)"
  ok "$run, nodiewithparent: and says kbound stopped it" \
    [ "$(json_get "$r" "[c['evidence']['lifetime']['stopped_by_kbound'] for k in d['kernels'] for c in k['checks'] if c['id'] == 'sandbox.session'][0]")" = True ]
  survivors=$(json_get "$r" "[c['evidence']['lifetime'].get('survivors', '') for k in d['kernels'] for c in k['checks'] if c['id'] == 'sandbox.session'][0]")
  ok "$run, nodiewithparent: says what the twin's init was at the bound (state, parent, SIGKILL pending)" \
    grep -Eq "init [0-9]+: State:.*PPid:.*ShdPnd:" <<<"$survivors"
  grep -Eq "init [0-9]+: State:.*PPid:.*ShdPnd:" <<<"$survivors" || echo "    got: $survivors"
  ok "$run, nodiewithparent: no twin left running (none orphaned)" [ -z "$(orphaned_twins)" ]
  # The twin's outer bwrap, killed, is a zombie until kbound reaps it: a look meeting it (which an
  # ordinary user may not read) sees a process that holds nothing, not an unreadable one.
  ok "$run, nodiewithparent: boundary.descriptors is not failed by the killed bwrap" \
    not grep -qF "the launch side's descriptors" <<<"$(detail_of "$r" python3 boundary.descriptors)"

  # A bwrap whose init arms --die-with-parent a second after PID 2 runs (the window every bwrap
  # has, stretched): the twin is tried once set up, so it dies with its bwrap and the claim holds.
  # (Its init also runs that second without its seccomp filter, which sandbox.attack_surface fails.)
  set +e
  as "$run" "$(kbound_for "$run")" check --kernel python3 --bwrap "$latearm" --json "$scratch/reports/latearm-$run.json" \
    >"$scratch/out" 2>"$scratch/err"
  set -e
  r=$scratch/reports/latearm-$run.json
  ok "$run, latearm: sandbox.session passes" [ "$(check_status "$r" python3 sandbox.session)" = pass ]
  [ "$(check_status "$r" python3 sandbox.session)" = pass ] || echo "    got: $(detail_of "$r" python3 sandbox.session)"
  ok "$run, latearm: the twin's bwrap was killed only once its init waited for its children" \
    [ "$(json_get "$r" "[c['evidence']['lifetime'].get('init_armed_ms', -1) for k in d['kernels'] for c in k['checks'] if c['id'] == 'sandbox.session'][0]")" -ge 0 ]
  ok "$run, latearm: no twin left running (none orphaned)" [ -z "$(orphaned_twins)" ]
  assert_no_leftovers "after the buggy bwraps ($run)"
done

# A host tool enters the running sandbox the way nsenter or docker exec do and leaves a process
# there holding a host working directory, the host's root, or a shared writable mapping of a host
# file the sandbox cannot reach (its descriptor closed).
# own_kernel PID: the ipykernel among PID's descendants, once it runs (else nothing).
own_kernel() {
  local p
  for p in $(descendants_of "$1"); do
    # the kernel itself, once exec'd: bwrap and kbound's limit setter (PID 2 before its exec)
    # carry the same command line while bwrap is still setting the sandbox up
    case $(readlink "/proc/$p/exe" 2>/dev/null) in */python3*) ;; *) continue ;; esac
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q ipykernel_launcher; then
      echo "$p"
      return
    fi
  done
}
# gated_spec: a python3 kernelspec (in a folder of its own, bound read-only into the sandbox) whose
# PID 2 waits for the file go in that folder before it execs ipykernel, so that what a host tool
# leaves in the sandbox is there before the kernel answers and the host's looks begin, however
# loaded the machine. Prints the folder; the kernelspec is its python3/.
gated_spec() {
  local gate
  gate=$(mktemp -d /dev/shm/kbound-gate-XXXXXX)
  mkdir -p "$gate/python3"
  /usr/bin/python3 - "$gate" <<'PY'
import json, sys
gate = sys.argv[1]
code = ("import os, sys, time\n"
        f"while not os.path.exists({gate + '/go'!r}):\n    time.sleep(0.02)\n"
        "os.execv('/usr/bin/python3', ['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', sys.argv[1]])\n")
json.dump({"argv": ["/usr/bin/python3", "-c", code, "{connection_file}", "ipykernel_launcher"],
           "display_name": "python3 (gated)", "language": "python", "interrupt_mode": "signal"},
          open(gate + "/python3/kernel.json", "w"))
PY
  chmod -R a+rX "$gate"
  echo "$gate"
}
# enter_during LABEL RUN MODE [PATH]: runs check (python3) as RUN and, once its kernel runs, enters
# (as the sandbox's user, or as ENTER_AS). With GATED=1 the kernel is gated_spec's, let go only once
# the tool has entered (or 20 s have passed).
enter_during() {
  local label=$1 run=$2 mode=$3 path=${4:-} kbound_pid pid2="" i gate="" kernel=(--kernel python3)
  local who
  who=$(sandbox_user_of "$run")
  if [ "${GATED:-0}" = 1 ]; then
    gate=$(gated_spec)
    cleanup_paths+=("$gate")
    kernel=(--kernel "$gate/python3" --ro-bind "$gate")
  fi
  as "$run" "$(kbound_for "$run")" check "${kernel[@]}" --json "$scratch/reports/$label.json" >"$scratch/$label.out" \
    2>"$scratch/$label.err" &
  kbound_pid=$!
  # This test's own kernel (never another test's): among this kbound's descendants.
  for ((i = 0; i < 400; i++)); do
    [ -z "$pid2" ] || break
    sleep 0.02
    pid2=$(own_kernel "$kbound_pid")
  done
  if [ -z "$pid2" ]; then
    fail "$label: this test's kernel never appeared"
    [ -z "$gate" ] || touch "$gate/go"
    wait "$kbound_pid" || true
    return
  fi
  runuser -u "${ENTER_AS:-$who}" -- "$fixtures/enter-sandbox" "$pid2" "$mode" $path >"$scratch/$label.enter" 2>&1 &
  if [ -n "$gate" ]; then
    for ((i = 0; i < 1000; i++)); do
      grep -q '^entered [0-9]' "$scratch/$label.enter" 2>/dev/null && break
      sleep 0.02
    done
    touch "$gate/go"
  fi
  set +e
  wait "$kbound_pid"
  rc=$?
  set -e
  ok "$label: the host tool entered ($(head -c 200 "$scratch/$label.enter"))" grep -q '^entered [0-9]' "$scratch/$label.enter"
  ok "$label: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
}
for run in "${runs[@]}"; do
  who=$(sandbox_user_of "$run")
  hostdir=$scratch/host-dir-$run
  install -d -m 700 -o "$who" "$hostdir"
  secret=$scratch/host-file-$run
  install -m 600 -o "$who" /dev/null "$secret"
  printf 'kbound host file\n' >"$secret"

  enter_during "enter-cwd-$run" "$run" cwd "$hostdir"
  r=$scratch/reports/enter-cwd-$run.json
  ok "enter-cwd-$run: boundary.descriptors names the process and its host working directory" \
    grep -qE "the working directory of pid [0-9]+ \(python3\), $hostdir \(dev [0-9:]+, inode [0-9]+\), is on mount [0-9]+, which is not one of the sandbox's" \
    <<<"$(detail_of "$r" python3 boundary.descriptors)"

  enter_during "enter-root-$run" "$run" root
  r=$scratch/reports/enter-root-$run.json
  ok "enter-root-$run: boundary.descriptors names the process whose root is the host's" \
    grep -qE "the root of pid [0-9]+ \(python3\), / \(dev [0-9:]+, inode [0-9]+\), is on mount [0-9]+, which is not one of the sandbox's" \
    <<<"$(detail_of "$r" python3 boundary.descriptors)"

  enter_during "enter-map-$run" "$run" map "$secret"
  r=$scratch/reports/enter-map-$run.json
  ok "enter-map-$run: boundary.descriptors names the shared, writable mapping of the host file" \
    grep -qE "pid [0-9]+ \(python3\) holds a shared, writable mapping of $secret \(dev [0-9:]+, inode [0-9]+\), a file the sandbox does not reach at that path" \
    <<<"$(detail_of "$r" python3 boundary.descriptors)"
  ok "enter-map-$run: the host file is as it was" [ "$(cat "$secret")" = "kbound host file" ]

  # Per-thread state (issue 35): a host folder held only in a thread's own descriptor table, and
  # by the live thread of a process whose main thread exited (a zombie leader).
  enter_during "enter-thread-fd-$run" "$run" thread-fd "$hostdir"
  r=$scratch/reports/enter-thread-fd-$run.json
  ok "enter-thread-fd-$run: boundary.descriptors names the thread's own table and the host folder" \
    grep -qE "fd [0-9]+ of thread [0-9]+ \(its own descriptor table\) of pid [0-9]+ \([^)]*\): $hostdir is on a host mount" \
    <<<"$(detail_of "$r" python3 boundary.descriptors)"
  enter_during "enter-zombie-$run" "$run" zombie "$hostdir"
  r=$scratch/reports/enter-zombie-$run.json
  ok "enter-zombie-$run: boundary.descriptors names the host folder its live thread holds" \
    grep -qE "fd [0-9]+ of pid [0-9]+ \([^)]*\): $hostdir is on a host mount" \
    <<<"$(detail_of "$r" python3 boundary.descriptors)"

  # by one descriptor moved to another number every few microseconds: the table is read again while
  # a descriptor listed closes or changes before it is read.
  GATED=1 enter_during "enter-fdmove-$run" "$run" fdmove "$hostdir"
  r=$scratch/reports/enter-fdmove-$run.json
  d=$(detail_of "$r" python3 boundary.descriptors)
  ok "enter-fdmove-$run: boundary.descriptors fails, naming the host folder or the moving table (got: ${d:0:300})" \
    grep -qE "$hostdir|kept closing or moving to other numbers" <<<"$d"

  # (enter-sandbox's forkchain mode, a chain of processes that each fork the next and exit at once,
  # is for reproducing by hand: whether a look meets a member alive depends on the chain's speed
  # against the host's reads, so it is no test of the suite.)

  # Objects no path names, their other ends kept by a process that never entered (issue 35): each
  # is traced to that holder, by the object (kcmp, a mapping's device and inode, fdinfo), not let
  # through by its kind.
  objdir=$scratch/watched-$run
  install -d -m 700 -o "$who" "$objdir"
  enter_during "enter-objects-$run" "$run" objects "$objdir"
  r=$scratch/reports/enter-objects-$run.json
  holder=$(awk '/^entered/ {print $2}' "$scratch/enter-objects-$run.enter")
  d=$(detail_of "$r" python3 boundary.descriptors)
  ok "enter-objects-$run: an eventfd held outside is a channel out" \
    grep -qE "anon_inode:\[eventfd\] is the very open file pid [0-9]+ \(python3, its fd [0-9]+\) holds, a process outside the sandbox" <<<"$d"
  ok "enter-objects-$run: a pidfd of the process outside" grep -qE "anon_inode:\[pidfd\] is the very open file pid [0-9]+|a pidfd of pid [0-9]+, a process outside" <<<"$d"
  ok "enter-objects-$run: an epoll watching a pipe no sandbox process holds" \
    grep -qE "anon_inode:\[eventpoll\] watches a file no process of the sandbox holds \(device [0-9:]+, inode [0-9]+" <<<"$d"
  ok "enter-objects-$run: an inotify watch on a host folder" \
    grep -qE "anon_inode:inotify has a inotify mark on device [0-9:]+, inode $(stat -c %i "$objdir"), a file the host cannot place" <<<"$d"
  ok "enter-objects-$run: memory mapped by the process outside too" \
    grep -qE "pid [0-9]+ \(python3\), a process outside the sandbox, holds /memfd:kbound-shm \(deleted\) (mapped|as fd [0-9]+) \(device [0-9:]+, inode [0-9]+\), the very memory object pid $holder \(python3\) of the sandbox holds" <<<"$d"
  ok "enter-objects-$run: its tracer outside" \
    grep -qE "pid $holder \(python3\) is traced by pid [0-9]+, a process outside the sandbox" <<<"$d"

  # Sockets whose other ends a process that never entered keeps or has left (issue 35): each
  # traced by sock_diag, the sandbox's own network namespace listed too (entered by a helper of
  # kbound's that joins its user namespace when kbound is not root).
  enter_during "enter-sockets-$run" "$run" sockets
  r=$scratch/reports/enter-sockets-$run.json
  holder=$(awk '/^entered/ {print $2}' "$scratch/enter-sockets-$run.enter")
  d=$(detail_of "$r" python3 boundary.descriptors)
  ok "enter-sockets-$run: a connection from outside waiting in the sandbox's listener, its sender named" \
    grep -qE "fd [0-9]+ of pid $holder \(python3\): socket:\[[0-9]+\] \(a listening unix stream socket of the sandbox's network namespace\): the connecting socket of a connection waiting in its queue \(socket:\[[0-9]+\]\), a socket of kbound's network namespace, is held by host pid [0-9]+ \(python3\), outside the sandbox" <<<"$d"
  ok "enter-sockets-$run: the accepted connection, its peer's holder outside named" \
    grep -qE "fd [0-9]+ of pid $holder \(python3\): socket:\[[0-9]+\] is a unix stream socket of kbound's network namespace, named /workspace/kbound-peer.sock, whose peer socket:\[[0-9]+\] is held by host pid [0-9]+ \(python3\), outside the sandbox" <<<"$d"
  ok "enter-sockets-$run: a descriptor left in a socket of the sandbox's network, its sender gone" \
    grep -qE "fd [0-9]+ of pid $holder \(python3\): socket:\[[0-9]+\] \(a connected unix stream socket of the sandbox's network namespace\): 1 bytes wait in its queue from a sender that is gone" <<<"$d"
  ok "enter-sockets-$run: one end of a socket pair made outside, its other end's holder named" \
    grep -qE "fd [0-9]+ of pid $holder \(python3\): socket:\[[0-9]+\] is a unix stream socket of kbound's network namespace, whose peer socket:\[[0-9]+\] is held by host pid [0-9]+ \(python3\), outside the sandbox" <<<"$d"
  ok "enter-sockets-$run: the sandbox's network namespace was listed with sock_diag" \
    not grep -qF "could not list the unix sockets of the sandbox's network namespace" <<<"$d"

  # Pipes a child of the sandbox reads (issue 35, red-team keep-pipe): the other end is found in
  # the sandbox, or proven gone by a poll of a copy of this end; one kept in flight in a socket's
  # queue outside is in no descriptor table, and fails as what the host cannot trace.
  GATED=1 enter_during "enter-pipes-$run" "$run" pipes
  r=$scratch/reports/enter-pipes-$run.json
  holder=$(awk '/^entered/ {print $2}' "$scratch/enter-pipes-$run.enter")
  read -r _ flight closed both < <(grep '^pipes ' "$scratch/enter-pipes-$run.enter")
  d=$(detail_of "$r" python3 boundary.descriptors)
  ok "enter-pipes-$run: the child named its pipes" [ -n "$both" ]
  ok "enter-pipes-$run: a pipe whose write end is in flight outside fails, named" \
    grep -qE "fd [0-9]+ of pid $holder \(python3\): pipe:\[$flight\] \(its read end\): its write end is held by no process the host found \(it is open: in flight in a socket's queue" <<<"$d"
  ok "enter-pipes-$run: a pipe whose write end is closed everywhere is not named" not grep -qF "pipe:[$closed]" <<<"$d"
  ok "enter-pipes-$run: a pipe whose both ends the sandbox holds is not named" not grep -qF "pipe:[$both]" <<<"$d"

  # Memory, the sandbox's IPC objects and its own devpts, held outside (issue 35, items 4, 5, 8, 9):
  # each found by the object however either side holds it. A shared mapping, read-only now, of a
  # host file opened for writing may be made writable.
  enter_during "enter-mayw-$run" "$run" mayw "$secret"
  ok "enter-mayw-$run: boundary.descriptors names the mapping that may be made writable" \
    grep -qE "pid [0-9]+ \(python3\) holds a shared mapping that may be made writable \(its file was opened for writing\) of $secret \(dev [0-9:]+, inode [0-9]+\), a file the sandbox does not reach at that path" \
    <<<"$(detail_of "$scratch/reports/enter-mayw-$run.json" python3 boundary.descriptors)"
  # memory files: a private mapping in the sandbox against a descriptor outside, a descriptor in
  # the sandbox against a mapping outside (kcmp and maps against maps let both through)
  enter_during "enter-memory-$run" "$run" memory
  holder=$(awk '/^entered/ {print $2}' "$scratch/enter-memory-$run.enter")
  d=$(detail_of "$scratch/reports/enter-memory-$run.json" python3 boundary.descriptors)
  ok "enter-memory-$run: a descriptor outside of what the sandbox maps privately" \
    grep -qE "pid $holder \(python3\), a process outside the sandbox, holds /memfd:kbound-private \(deleted\) as fd [0-9]+ \(device [0-9:]+, inode [0-9]+\), the very memory object pid [0-9]+ \(python3\) of the sandbox holds mapped" <<<"$d"
  ok "enter-memory-$run: a mapping outside of what the sandbox holds as a descriptor" \
    grep -qE "pid $holder \(python3\), a process outside the sandbox, holds /memfd:kbound-held \(deleted\) mapped \(device [0-9:]+, inode [0-9]+\), the very memory object pid [0-9]+ \(python3\) of the sandbox holds as fd [0-9]+" <<<"$d"
  # a queue of the sandbox's IPC namespace and a pty master of its devpts; as root, a SysV segment
  # attached by a process that went in and came back
  as_who=$who
  [ "$(id -u)" -eq 0 ] && [ "$run" = self ] && as_who=root
  ENTER_AS=$as_who enter_during "enter-ipc-$run" "$run" ipc
  holder=$(awk '/^entered/ {print $2}' "$scratch/enter-ipc-$run.enter")
  d=$(detail_of "$scratch/reports/enter-ipc-$run.json" python3 boundary.descriptors)
  ok "enter-ipc-$run: a message queue of the sandbox's IPC namespace held outside" \
    grep -qE "pid $holder \(python3\), a process outside the sandbox, holds /kbound-held as fd [0-9]+ \(device [0-9:]+, inode [0-9]+\), a file of the message-queue filesystem of the sandbox's IPC namespace" <<<"$d"
  ok "enter-ipc-$run: the master of a pty of the sandbox's own devpts held outside" \
    grep -qE "pid $holder \(python3\), a process outside the sandbox, holds /dev/pts/ptmx as fd [0-9]+ \(device [0-9:]+, inode 2\), a file of the sandbox's own devpts at /dev/pts" <<<"$d"
  ok "enter-ipc-$run: sandbox.session names the pty held outside as a terminal into the sandbox" \
    grep -qE "pid $holder \(python3\), a process outside the sandbox, holds /dev/pts/ptmx of the sandbox's own devpts \([^)]*\): a terminal into the sandbox" \
    <<<"$(detail_of "$scratch/reports/enter-ipc-$run.json" python3 sandbox.session)"
  if [ "$as_who" = root ]; then
    ok "enter-ipc-$run: a SysV segment of the sandbox's IPC namespace attached outside" \
      grep -qE "the SysV shared memory segment [0-9]+ \(key 0x4b424e44\) of the sandbox's IPC namespace is attached 1 time\(s\) outside the sandbox's processes \([^)]*\): pid $holder \(python3\)" <<<"$d"
  fi

  # A fork named kbound, running its parent's program, as a second kbound's look helper would be:
  # one that leaves within a second is that; one that stays is a holder all the same.
  enter_during "enter-as-kbound-$run" "$run" as-kbound
  r=$scratch/reports/enter-as-kbound-$run.json
  ok "enter-as-kbound-$run: sandbox.backend names the fork that stayed, and its parent" \
    grep -qE "pid [0-9]+ \(kbound, child of pid [0-9]+\), outside the sandbox, is in the sandbox's (net|mnt|user) namespace" \
    <<<"$(detail_of "$r" python3 sandbox.backend)"
  assert_no_leftovers "after the processes that entered ($run)"
done

# A host folder bind-mounted writable into the running sandbox while the interrupt cells run, and
# removed a second later: kbound sees the kernel's mount table change and looks again, and the
# mount fails boundary.write_outside (root: it enters the sandbox's mount namespace from outside).
if [ "$(id -u)" -eq 0 ]; then
  src=$scratch/injected
  install -d -m 755 "$src"
  "$KBOUND" check --kernel python3 --json "$scratch/reports/inject.json" >"$scratch/inject.out" 2>"$scratch/inject.err" &
  kbound_pid=$!
  pid2=""
  for ((i = 0; i < 400; i++)); do
    [ -z "$pid2" ] || break
    sleep 0.02
    pid2=$(own_kernel "$kbound_pid")
  done
  # ready beforehand, it mounts as soon as the first long cell runs (its progress file is in the
  # sandbox's workspace, a tmpfs the host sees through the kernel's root),
  # so that the kernel's messages after it make kbound look again
  "$fixtures/inject-mount" "$pid2" "$src" /usr/local/share 1 \
    "/proc/$pid2/root/workspace/.kbound-progress-control-*" >"$scratch/inject.log" 2>&1 || true
  set +e
  wait "$kbound_pid"
  rc=$?
  set -e
  r=$scratch/reports/inject.json
  ok "inject: the mount was made and removed ($(tr '\n' ' ' <"$scratch/inject.log"))" grep -q removed "$scratch/inject.log"
  ok "inject: exit 1 (rc=$rc)" [ "$rc" -eq 1 ]
  ok "inject: boundary.write_outside names the writable host mount" \
    grep -qF "a writable mount at /usr/local/share" <<<"$(detail_of "$r" python3 boundary.write_outside)"
  ok "inject: a look was taken because the mount table changed" \
    [ "$(json_get "$r" "'mounts changed' in [l['label'] for l in d['kernels'][0]['inspection']['looks']]")" = True ]
  assert_no_leftovers "after the injected mount"
fi
finish
