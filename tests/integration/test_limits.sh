#!/usr/bin/env bash
# A hostile cell cannot take the host's memory, tasks, RAM through /tmp or disk through the
# workspace (docs/limits.md): each is stopped at the sandbox's limit, set small by option so the
# test stays small (a 3 GiB balloon against 1 GiB, 200 processes against 64, 200 MiB into a 32 MiB
# /tmp, /dev/shm and /workspace),
# with a clear error in the cell, kbound ending well within its deadline and nothing left behind;
# check reports each limit in force and the peaks. As root (the sandbox's own cgroups, and the
# limits inside) and as an ordinary user (the limits inside only).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"
require bwrap /usr/bin/python3 runuser

user=$(test_user)
chmod 1777 "$KBOUND_RUNTIME_DIR"
mkdir -m 1777 "$scratch/out"
as_user() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  as_user() { runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 \
    KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$@"; }
fi

balloon='b = bytearray(3 << 30)
print("kbound-balloon survived")'
bomb='import subprocess
ps = []
try:
    for i in range(200):
        ps.append(subprocess.Popen(["sleep", "30"]))
except OSError as e:
    print("kbound-bomb stopped at", len(ps), type(e).__name__)
for p in ps:
    p.kill()
    p.wait()'
fill='import os
for d in ("/tmp", "/dev/shm", "/workspace", "/run/kbound"):
    n = 0
    try:
        with open(d + "/fill", "wb") as f:
            for i in range(200):
                f.write(b"x" * (1 << 20))
                f.flush()
                n += 1
    except OSError as e:
        print("kbound-fill", d, "stopped at", n, "MiB:", e.strerror)
    os.unlink(d + "/fill")'

# Four processes that each spin for 2 s: 8 CPU seconds unbounded on four cores, at most about 2
# (with the period's slack) under one CPU's worth; the CPU time their parent counts is printed.
spin='import os, time
def spin():
    end = time.time() + 2
    while time.time() < end:
        pass
t0, c0 = time.time(), os.times()
pids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        spin()
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
c1 = os.times()
print("kbound-spin cpu %.2f wall %.2f" % (c1.children_user + c1.children_system - c0.children_user - c0.children_system, time.time() - t0))'

# cell LABEL RUNNER... -- LIMITS... -- CODE: `kbound run` of CODE under LIMITS, by RUNNER.
cell() {
  local label=$1 runner=() limits=() start
  shift
  while [ "$1" != "--" ]; do runner+=("$1"); shift; done
  shift
  while [ "$1" != "--" ]; do limits+=("$1"); shift; done
  shift
  start=$(date +%s)
  set +e
  "${runner[@]}" run --kernel python3 --timeout 60 "${limits[@]}" "$1" >"$scratch/out/$label.out" 2>"$scratch/out/$label.err"
  rc=$?
  set -e
  took=$(($(date +%s) - start))
}

for who in root "$user"; do
  if [ "$who" = root ]; then
    [ "$(id -u)" -eq 0 ] || continue
    runner=("$KBOUND")
  else
    runner=(as_user "$(user_kbound)")
  fi
  echo "as $who: a 3 GiB balloon against --memory-max 1G"
  cell "$who-balloon" "${runner[@]}" -- --memory-max 1G -- "$balloon"
  ok "$who: the cell failed (rc=$rc), within 60 s (${took} s)" [ "$rc" -eq 1 -a "$took" -lt 60 ]
  if [ "$who" = root ]; then
    # the sandbox's own memory cgroup: its OOM killer ends the kernel, and kbound says it was the limit
    ok "$who:   ... the kernel killed at the limit, named" \
      grep -q "died while running the cell: .*after the sandbox's memory cgroup killed [1-9][0-9]* process(es) at its limit (--memory-max)" \
      "$scratch/out/$who-balloon.err"
  else
    # RLIMIT_AS: the allocation itself is refused
    ok "$who:   ... with MemoryError, named" grep -q "the cell raised MemoryError" "$scratch/out/$who-balloon.err"
    echo "as $who: a limit below what the kernel reserves refuses its start, saying why"
    cell "$who-small" "${runner[@]}" -- --memory-max 64M -- 'print(1)'
    ok "$who: the sandbox could not be used (rc=$rc)" [ "$rc" -eq 3 ]
    ok "$who:   ... naming the per-process address-space limit and the option" \
      grep -q "kernel exited during start-up: .*RLIMIT_AS 64.0 MiB: a kernel reserving more cannot start; raise --memory-max" \
      "$scratch/out/$who-small.err"
  fi
  ok "$who:   ... and it never got its memory" not grep -q "kbound-balloon survived" "$scratch/out/$who-balloon.out"

  echo "as $who: 200 processes against --tasks-max 64"
  cell "$who-bomb" "${runner[@]}" -- --tasks-max 64 -- "$bomb"
  n=$(sed -n 's/^kbound-bomb stopped at \([0-9]*\) .*/\1/p' "$scratch/out/$who-bomb.out")
  ok "$who: the cell ran to its end (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$who:   ... stopped before 64 processes (at ${n:-none})" [ "${n:-0}" -gt 0 -a "${n:-0}" -lt 64 ]
  ok "$who:   ... by a refused fork" grep -qE "kbound-bomb stopped at [0-9]+ (BlockingIOError|OSError)" \
    "$scratch/out/$who-bomb.out"

  echo "as $who: 200 MiB into /tmp, /dev/shm and /workspace against --tmp-size 32M --workspace-max 32M"
  cell "$who-fill" "${runner[@]}" -- --tmp-size 32M --workspace-max 32M -- "$fill"
  ok "$who: the cell ran to its end (rc=$rc)" [ "$rc" -eq 0 ]
  for d in /tmp /dev/shm /workspace; do
    m=$(sed -n "s|^kbound-fill $d stopped at \([0-9]*\) MiB: No space left on device|\1|p" "$scratch/out/$who-fill.out")
    ok "$who:   ... $d full at ${m:-?} MiB (no space left), not past 32" [ -n "$m" -a "${m:-99}" -le 32 ]
  done
  m=$(sed -n "s|^kbound-fill /run/kbound stopped at \([0-9]*\) MiB: No space left on device|\1|p" "$scratch/out/$who-fill.out")
  ok "$who:   ... the kernel's socket folder full at ${m:-?} MiB, not past its 1 MiB" [ -n "$m" -a "${m:-99}" -le 1 ]

  echo "as $who: a kernel that writes 256 MiB to its log against --log-max 4M"
  flood_spec=$(scratch="$scratch/out/$who" hostile_spec flood good --log-flood $((256 << 20)))
  chmod -R a+rX "$scratch/out/$who"
  set +e
  "${runner[@]}" check --kernel "$flood_spec" "${bind[@]}" --log-max 4M --keep \
    --json "$scratch/out/$who-flood.json" >"$scratch/out/$who-flood.txt" 2>&1
  rc=$?
  set -e
  kept_dir=$(sed -n 's/^kbound: kept the team folders under \(.*\)$/\1/p' "$scratch/out/$who-flood.txt" | tail -1)
  ok "$who: check ran to its verdict (rc=$rc), the team folders kept" [ "$rc" -le 1 -a -n "$kept_dir" ]
  logs=$(find "${kept_dir:-/nonexistent}" -name 'kernel.log*' -printf '%s\n' 2>/dev/null)
  on_disk=$(awk '{s += $1} END {print s + 0}' <<<"$logs")
  ok "$who:   ... at most 4 MiB of its log on disk ($on_disk bytes in $(wc -l <<<"$logs") files)" \
    [ "$on_disk" -gt 0 -a "$on_disk" -le $((4 << 20)) ]
  ok "$who:   ... its newest line kept" grep -q "the flood's last line" "${kept_dir:-/nonexistent}"/teams/*/host/kernel.log
  flood() { json_get "$scratch/out/$who-flood.json" "next(c for c in d['kernels'][0]['checks'] if c['id']=='sandbox.resources')$1"; }
  ok "$who:   ... sandbox.resources pass" [ "$(flood "['status']")" = pass ]
  ok "$who:   ... the report says 256 MiB written, what was dropped, and at most 4 MiB kept" \
    /usr/bin/python3 -c 'import sys; w, d, k = map(int, sys.argv[1:]); sys.exit(0 if w >= 256 << 20 and d > 0 and w == d + k and k <= 4 << 20 else 1)' \
    "$(flood "['evidence']['used']['log_written_bytes']")" "$(flood "['evidence']['used']['log_dropped_bytes']")" \
    "$(flood "['evidence']['used']['log_kept_bytes']")"
  rm -rf "${kept_dir:?}"

  if [ "$who" = root ]; then
    # the sandbox's own cpu cgroup: the spinners together get one CPU's worth, however many cores
    echo "as $who: four spinning processes against --cpu-max 1"
    cell "$who-spin" "${runner[@]}" -- --cpu-max 1 -- "$spin"
    read -r cpu wall < <(sed -n 's/^kbound-spin cpu \([0-9.]*\) wall \([0-9.]*\)$/\1 \2/p' "$scratch/out/$who-spin.out")
    ok "$who: the cell ran to its end (rc=$rc)" [ "$rc" -eq 0 -a -n "${cpu:-}" ]
    ok "$who:   ... at most one CPU's worth: ${cpu:-?} CPU seconds in ${wall:-?} s" \
      /usr/bin/python3 -c 'import sys; c, w = map(float, sys.argv[1:]); sys.exit(0 if c <= w * 1.25 + 0.2 else 1)' "${cpu:-99}" "${wall:-0}"
  else
    # no cgroup of its own unprivileged: nothing bounds processor time, so nothing starts
    echo "as $who: --cpu-max where no cpu cgroup can be made"
    cell "$who-spin" "${runner[@]}" -- --cpu-max 1 -- "$spin"
    ok "$who: the sandbox could not be used (rc=$rc)" [ "$rc" -eq 3 ]
    ok "$who:   ... naming the option and why" grep -q "cannot enforce --cpu-max: no cpu cgroup of the sandbox's own could be made here" \
      "$scratch/out/$who-spin.err"
    ok "$who:   ... and nothing of the cell ran" not grep -q "kbound-spin" "$scratch/out/$who-spin.out"
  fi

  echo "as $who: a kept workspace is copied out: files and folders, never a link or a FIFO"
  keep_cell='import os
os.makedirs("/workspace/out/deep")
open("/workspace/out/deep/result.txt", "w").write("kbound-kept-result")
os.symlink("/etc/shadow", "/workspace/out/shadow")
os.mkfifo("/workspace/out/fifo")
print("kbound-keep written")'
  cell "$who-keep" "${runner[@]}" -- --keep -- "$keep_cell"
  kept_dir=$(sed -n 's/^kbound: kept the team folders under \(.*\)$/\1/p' "$scratch/out/$who-keep.err" | tail -1)
  ok "$who: the cell ran (rc=$rc), the team folders kept" [ "$rc" -eq 0 -a -n "$kept_dir" ]
  ws_host=$(echo "${kept_dir:-/nonexistent}"/teams/*/workspace)
  ok "$who:   ... its file on the host" grep -qx "kbound-kept-result" "$ws_host/out/deep/result.txt"
  ok "$who:   ... no link and no FIFO made there" [ ! -L "$ws_host/out/shadow" -a ! -e "$ws_host/out/shadow" -a ! -e "$ws_host/out/fifo" ]
  ok "$who:   ... and the copy says what it left out" \
    grep -q "entries left out (links, FIFOs" "${kept_dir:-/nonexistent}"/teams/*/host/workspace-copy.txt
  rm -rf "${kept_dir:?}"

  echo "as $who: check reports the limits asked, in force, and the peaks"
  set +e
  "${runner[@]}" check --kernel python3 --memory-max 768M --tasks-max 128 --tmp-size 64M --workspace-max 96M \
    --json "$scratch/out/$who-check.json" >"$scratch/out/$who-check.txt" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || tail -30 "$scratch/out/$who-check.txt"
  ok "$who: check passes (rc=$rc)" [ "$rc" -eq 0 ]
  res() { json_get "$scratch/out/$who-check.json" "next(c for c in d['kernels'][0]['checks'] if c['id']=='sandbox.resources')$1"; }
  ok "$who: sandbox.resources pass" [ "$(res "['status']")" = pass ]
  ok "$who:   ... the limits asked are the report's" \
    [ "$(res "['evidence']['limits']['memory']")/$(res "['evidence']['limits']['tasks']")/$(res "['evidence']['limits']['workspace']")" = "$((768 << 20))/128/$((96 << 20))" ]
  ok "$who:   ... the workspace a tmpfs of its own, its use reported" \
    grep -q "/workspace at most 96.0 MiB (a tmpfs of its own; [1-9][0-9]* bytes used at most)" <<<"$(res "['detail']")"
  ok "$who:   ... a memory peak above zero and below the limit" \
    /usr/bin/python3 -c 'import sys; v = int(sys.argv[1]); sys.exit(0 if 0 < v < (768 << 20) else 1)' \
    "$(res "['evidence']['used']['memory_peak_bytes']")"
  if [ "$who" = root ]; then
    ok "$who:   ... by the sandbox's own cgroups" grep -q "for the whole sandbox (its memory cgroup" <<<"$(res "['detail']")"
    set +e
    # two CPUs' worth (this machine's all): in force and read back, without slowing the checks'
    # timed cells beside the suite's other tests (the spinners above show it bounds)
    "${runner[@]}" check --kernel python3 --cpu-max 2 --json "$scratch/out/$who-cpu.json" >"$scratch/out/$who-cpu.txt" 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 0 ] || grep -vE "^PASS " "$scratch/out/$who-cpu.txt" | tail -20
    ok "$who: check --cpu-max 2 passes (rc=$rc)" [ "$rc" -eq 0 ]
    ok "$who:   ... processor time reported in force" grep -q "processor time at most 2 CPU(s) for the whole sandbox (its cpu cgroup)" \
      <<<"$(json_get "$scratch/out/$who-cpu.json" "next(c['detail'] for c in d['kernels'][0]['checks'] if c['id']=='sandbox.resources')")"
  else
    ok "$who:   ... by the limits inside the sandbox (no cgroup: not delegated here)" \
      grep -q "per process (RLIMIT_AS)" <<<"$(res "['detail']")"
  fi
done

echo "a limit that is not a size or a count"
set +e
"$KBOUND" run --kernel python3 --tasks-max lots 'print(1)' >"$scratch/out/bad.out" 2>"$scratch/out/bad.err"
rc=$?
set -e
ok "usage error (rc=$rc)" [ "$rc" -eq 2 ]
ok "  ... naming the option and what it takes" grep -q "run: --tasks-max takes a count (e.g. 512), or none, not 'lots'" \
  "$scratch/out/bad.err"
assert_no_leftovers "after the limits runs"
finish
