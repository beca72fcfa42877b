#!/usr/bin/env bash
# scripts/test's clean slate on a workstation: `scripts/test --clean-only` removes what earlier,
# gone runs of scripts/test by the same user left (their folders, and their users when no process
# of theirs is left), and nothing else. Beside it: a live `kbound console` whose kernel runs as a
# gone run's user (the old clean-up's pkill -u would have killed it), another user's folder kept
# with --keep, a live run's folder, a folder of another user named like a run's, a kbound folder
# (/tmp/kbound-* was swept before), and a second console whose kernel runs as kbound's default
# sandbox user (kbound-sandbox as root, which the old clean-up killed): every one of them
# survives, and each console's kernel still has its variable. The sweep runs in folders of this test's own (KBOUND_TEST_STATE_ROOT,
# KBOUND_TEST_CACHE_ROOT), and first as --dry-run, which removes nothing. This test kills only
# what it started, and deletes only the users it made.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 flock pgrep mkfifo

# A copy of scripts/test that every user here can run (the checkout may be in root's 0700 home).
install -d -m 755 "$scratch/checkout/scripts"
install -m 755 "$KBOUND_SOURCE_DIR/scripts/test" "$scratch/checkout/scripts/test"
root_dir=$scratch/state
cache_dir=$scratch/cache
install -d -m 1777 "$root_dir" "$cache_dir"
sweep() { # sweep [--dry-run]: the clean-up as the invoking user
  env KBOUND_TEST_STATE_ROOT="$root_dir" KBOUND_TEST_CACHE_ROOT="$cache_dir" \
    "$scratch/checkout/scripts/test" --clean-only "$@"
}
as_user_sweep() { # as_user_sweep USER [--dry-run]
  local user=$1
  shift
  runuser -u "$user" -- env -i PATH=/usr/bin:/bin KBOUND_TEST_STATE_ROOT="$root_dir" \
    KBOUND_TEST_CACHE_ROOT="$cache_dir" "$scratch/checkout/scripts/test" --clean-only "$@"
}
hexid() { od -An -N3 -tx1 /dev/urandom | tr -d ' \n'; }

# fake_run ID [USER...]: a run folder as scripts/test makes it (run file, lock, tmp/) and its caches.
fake_run() {
  local id=$1 user
  shift
  install -d -m 711 "$root_dir/kbtest-$id" "$root_dir/kbtest-$id/tmp"
  echo "started by this test" >"$root_dir/kbtest-$id/run"
  for user in "$@"; do echo "user $user" >>"$root_dir/kbtest-$id/run"; done
  : >"$root_dir/kbtest-$id/lock"
  install -d -m 755 "$cache_dir/kbtest-$id"
  echo "caches" >"$cache_dir/kbtest-$id/run"
}

users_made=()
make_user() { # make_user NAME: a system user of this test's own, deleted at its end
  users_made+=("$1")
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$1"
}
end_test() {
  local user
  cleanup_test # this test's processes (the console, the sleeper, the lock holder), then its users
  for user in "${users_made[@]}"; do
    id "$user" >/dev/null 2>&1 || continue
    # The console's kernel ends with its kbound (killed above): wait for it, kill nothing more.
    for _ in $(seq 1 50); do pgrep -u "$user" >/dev/null || break; sleep 0.1; done
    userdel "$user" 2>/dev/null || echo "test_workstation: could not delete its user $user" >&2
  done
}
trap end_test EXIT

root=$([ "$(id -u)" -eq 0 ] && echo yes || echo no)
dead=$(hexid)  # a gone run of this user's: removed
busy=$(hexid)  # a gone run whose user still has a process (the console's kernel): kept, nothing killed
live=$(hexid)  # a live run (its lock held): kept
if [ "$root" = yes ]; then
  make_user "kbtest-$dead-sb"
  make_user "kbtest-$busy-sb"
  make_user "kbtest-$live-sb"
  fake_run "$dead" "kbtest-$dead-sb"
  fake_run "$busy" "kbtest-$busy-sb"
  fake_run "$live" "kbtest-$live-sb"
else
  fake_run "$dead"
  fake_run "$live"
fi
package_user=$(getent passwd kbound-sandbox || true)
# One process holds the live run's lock (as scripts/test's descendants hold theirs).
(
  exec {held}>"$root_dir/kbtest-$live/lock"
  flock "$held"
  exec sleep 600
) &
lock_holder=$!
mkdir -m 700 "$root_dir/kbound-Abc123" # a kbound folder (the old clean-up removed /tmp/kbound-*)

echo "a live console (as root: its kernel runs as the gone run's user kbtest-$busy-sb)"
mkfifo "$scratch/console.in"
console_user=()
[ "$root" = no ] || console_user=(--sandbox-user "kbtest-$busy-sb")
"$KBOUND" console --kernel python3 --team workstation "${console_user[@]}" <"$scratch/console.in" \
  >"$scratch/console.out" 2>"$scratch/console.err" &
console_pid=$!
exec {console_in}>"$scratch/console.in"
echo 'x = 41; print("ready", x)' >&"$console_in"
for _ in $(seq 1 600); do
  grep -q "ready 41" "$scratch/console.out" 2>/dev/null && break
  kill -0 "$console_pid" 2>/dev/null || break
  sleep 0.1
done
ok "the console runs a cell" grep -q "ready 41" "$scratch/console.out"
if [ "$root" = yes ]; then
  ok "  ... its kernel runs as kbtest-$busy-sb" pgrep -u "kbtest-$busy-sb" >/dev/null
fi
# The workstation of issue 39: a console whose kernel runs as the sandbox user kbound picks by
# default (kbound-sandbox, the package's, as root), which the old clean-up's pkill -u killed.
mkfifo "$scratch/pkg.in"
"$KBOUND" console --kernel python3 --team workstation-pkg <"$scratch/pkg.in" >"$scratch/pkg.out" 2>"$scratch/pkg.err" &
pkg_pid=$!
exec {pkg_in}>"$scratch/pkg.in"
echo 'y = 6; print("pkg", y)' >&"$pkg_in"
for _ in $(seq 1 600); do
  grep -q "pkg 6" "$scratch/pkg.out" 2>/dev/null && break
  kill -0 "$pkg_pid" 2>/dev/null || break
  sleep 0.1
done
ok "a console as the default sandbox user ($(sandbox_user)) runs a cell" grep -q "pkg 6" "$scratch/pkg.out"

other_owned=""
if [ "$root" = yes ]; then
  tuser=$(test_user)
  echo "another user's folder kept with --keep, and a folder of theirs named like a gone run's"
  runuser -u "$tuser" -- env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8 KBOUND_RUNTIME_DIR="$root_dir" \
    "$(user_kbound)" console --kernel python3 --keep </dev/null >"$scratch/keep.out" 2>"$scratch/keep.err"
  kept=$(sed -n 's/.*kept the team folders under \(.*\)/\1/p' "$scratch/keep.err")
  ok "$tuser's console kept its folders ($kept)" test -d "$kept/teams/console/workspace"
  cleanup_paths+=("$kept")
  other=$(hexid)
  runuser -u "$tuser" -- sh -c "mkdir -m 711 '$root_dir/kbtest-$other' && echo 'user kbtest-$other-sb' >'$root_dir/kbtest-$other/run'"
  other_owned=$root_dir/kbtest-$other
  # The ordinary user's own gone run, which only its own sweep removes.
  user_dead=$(hexid)
  runuser -u "$tuser" -- sh -c "mkdir -m 711 '$root_dir/kbtest-$user_dead' && echo started >'$root_dir/kbtest-$user_dead/run'"
fi

echo "--dry-run says what it would remove, and removes nothing"
sweep --dry-run >"$scratch/dry.out" 2>"$scratch/dry.err"
cat "$scratch/dry.out" "$scratch/dry.err"
ok "it would remove the gone run's folder" grep -qxF "would remove $root_dir/kbtest-$dead (run $dead)" "$scratch/dry.out"
ok "  ... and its caches" grep -qxF "would remove $cache_dir/kbtest-$dead (run $dead's caches)" "$scratch/dry.out"
if [ "$root" = yes ]; then
  ok "  ... and its user" grep -qxF "would delete user kbtest-$dead-sb (run $dead)" "$scratch/dry.out"
  ok "it names the gone run whose user still has processes, and kills none" \
    grep -qF "run $busy's user kbtest-$busy-sb still has processes" "$scratch/dry.err"
fi
ok "it would remove nothing else" [ "$(grep -c '^would' "$scratch/dry.out")" -eq "$([ "$root" = yes ] && echo 3 || echo 2)" ]
ok "  ... and removed nothing" test -d "$root_dir/kbtest-$dead"

echo "the sweep"
sweep >"$scratch/sweep.out" 2>"$scratch/sweep.err"
cat "$scratch/sweep.out" "$scratch/sweep.err"
ok "the gone run's folder is removed" not test -e "$root_dir/kbtest-$dead"
ok "  ... and its caches" not test -e "$cache_dir/kbtest-$dead"
ok "the live run's folder is kept" test -f "$root_dir/kbtest-$live/run"
ok "  ... and its caches" test -d "$cache_dir/kbtest-$live"
ok "the sweep says the live run was kept" grep -qF "run $live is live (its lock is held): kept" "$scratch/sweep.out"
ok "the kbound folder is kept" test -d "$root_dir/kbound-Abc123"
ok "the lock holder still runs" kill -0 "$lock_holder"
if [ "$root" = yes ]; then
  ok "the gone run's user is deleted" not id "kbtest-$dead-sb"
  ok "the live run's user is kept" id "kbtest-$live-sb"
  ok "the busy gone run's user is kept" id "kbtest-$busy-sb"
  ok "  ... and its folder, to be removed once its processes end" test -f "$root_dir/kbtest-$busy/run"
  ok "another user's folder named like a run's is kept" test -f "$other_owned/run"
  ok "another user's gone run is kept (only its own sweep removes it)" test -f "$root_dir/kbtest-$user_dead/run"
  ok "another user's kept folder is kept" test -d "$kept/teams/console/workspace"
  ok "the package's user is as it was" [ "$(getent passwd kbound-sandbox || true)" = "$package_user" ]

  echo "the ordinary user's sweep: its own gone run only"
  as_user_sweep "$tuser" >"$scratch/usweep.out" 2>&1 || true
  cat "$scratch/usweep.out"
  ok "$tuser's gone run is removed" not test -e "$root_dir/kbtest-$user_dead"
  ok "root's busy gone run is kept" test -f "$root_dir/kbtest-$busy/run"
  ok "root's live run is kept" test -f "$root_dir/kbtest-$live/run"
  ok "the kept folder is still there" test -d "$kept/teams/console/workspace"
fi

echo "the console lived through it"
ok "the console is still running" kill -0 "$console_pid"
echo 'print("after", x + 1)' >&"$console_in"
for _ in $(seq 1 300); do
  grep -q "after 42" "$scratch/console.out" 2>/dev/null && break
  kill -0 "$console_pid" 2>/dev/null || break
  sleep 0.1
done
ok "  ... and its kernel still has its variable (after 42)" grep -q "after 42" "$scratch/console.out"
ok "the default sandbox user's console is still running" kill -0 "$pkg_pid"
echo 'print("pkg after", y + 1)' >&"$pkg_in"
for _ in $(seq 1 300); do
  grep -q "pkg after 7" "$scratch/pkg.out" 2>/dev/null && break
  kill -0 "$pkg_pid" 2>/dev/null || break
  sleep 0.1
done
ok "  ... and its kernel still has its variable (pkg after 7)" grep -q "pkg after 7" "$scratch/pkg.out"
exec {pkg_in}>&-
set +e
wait "$pkg_pid"
prc=$?
set -e
ok "  ... and ends at the end of its input (rc=$prc)" [ "$prc" -eq 0 ]
[ "$prc" -eq 0 ] || cat "$scratch/pkg.err"
exec {console_in}>&-
set +e
wait "$console_pid"
rc=$?
set -e
ok "  ... and ends at the end of its input (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat "$scratch/console.err"

if [ "$root" = yes ]; then
  echo "once its processes are gone, the busy run goes too"
  sweep >"$scratch/sweep2.out" 2>&1
  ok "the busy run's user is deleted" not id "kbtest-$busy-sb"
  ok "  ... and its folder removed" not test -e "$root_dir/kbtest-$busy"
fi
kill "$lock_holder" 2>/dev/null || true
wait "$lock_holder" 2>/dev/null || true
sweep >"$scratch/sweep3.out" 2>&1
ok "with its lock free, the formerly live run is removed" not test -e "$root_dir/kbtest-$live"
assert_no_leftovers "after the consoles"
finish
