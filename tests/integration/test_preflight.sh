#!/usr/bin/env bash
# Kernels where users keep them: a venv's kernelspec found through --prefix, VIRTUAL_ENV or the
# venv's python3 on PATH, in jupyter_core's order; and the preflight that, before anything starts,
# names the --ro-bind folders (or the --rootfs) that would put a kernel's program, its "#!"
# interpreter and its kernelspec folder inside the sandbox: never a late "bwrap: execvp".
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 runuser

# A venv as `python3 -m venv --system-site-packages` makes it (Debian's venv module needs
# python3-venv, which kbound does not otherwise need): pyvenv.cfg, and bin/python a link to the
# system's python, whose ipykernel it then uses.
venv="$scratch/venv"
mkdir -p "$venv/bin" "$venv/share/jupyter/kernels/venvpy" "$scratch/home/.local/share/jupyter/kernels/venvpy"
printf 'home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11\n' >"$venv/pyvenv.cfg"
ln -s /usr/bin/python3 "$venv/bin/python3"
ln -s python3 "$venv/bin/python"
printf '{"argv": ["%s/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "venv", "language": "python"}\n' \
  "$venv" >"$venv/share/jupyter/kernels/venvpy/kernel.json"
printf '{"argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "user", "language": "python"}\n' \
  >"$scratch/home/.local/share/jupyter/kernels/venvpy/kernel.json"
chmod -R a+rX "$scratch"

# venvpy_of [NAME=VALUE...] [-- KBOUND_ARGS...]: the resource_dir of the venvpy kernelspec that
# `kbound kernelspecs` lists, with that environment (HOME the scratch one) and those options.
venvpy_of() {
  local envs=() args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  args=("$@")
  env -u JUPYTER_PATH -u JUPYTER_DATA_DIR -u XDG_DATA_HOME -u VIRTUAL_ENV -u CONDA_PREFIX HOME="$scratch/home" \
    "${envs[@]}" "$KBOUND" kernelspecs --json "${args[@]}" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["kernelspecs"].get("venvpy", {}).get("resource_dir", ""))'
}
user_spec=$scratch/home/.local/share/jupyter/kernels/venvpy
venv_spec=$venv/share/jupyter/kernels/venvpy

echo "discovery in jupyter_core's order"
ok "without the venv, the user's venvpy" [ "$(venvpy_of)" = "$user_spec" ]
ok "--prefix VENV: the venv's, before the user's (a venv the user owns)" [ "$(venvpy_of -- --prefix "$venv")" = "$venv_spec" ]
ok "VIRTUAL_ENV=VENV: the same" [ "$(venvpy_of VIRTUAL_ENV="$venv")" = "$venv_spec" ]
ok "the venv's python3 first on PATH: the same" [ "$(venvpy_of PATH="$venv/bin:$PATH")" = "$venv_spec" ]
ok "JUPYTER_PREFER_ENV_PATH=0: the user's first again" [ "$(venvpy_of VIRTUAL_ENV="$venv" JUPYTER_PREFER_ENV_PATH=0)" = "$user_spec" ]

# preflight NAME RC PATTERN COMMAND...: the command's exit code and what it says on stderr.
preflight() {
  local name=$1 want=$2 pattern=$3
  shift 3
  set +e
  "$@" >"$scratch/p.out" 2>"$scratch/p.err"
  local got=$?
  set -e
  ok "$name: exit $want (got $got)" [ "$got" -eq "$want" ]
  ok "$name: says '$pattern'" grep -qF -- "$pattern" "$scratch/p.err"
  ok "$name: no late bwrap failure" bash -c "! grep -q 'execvp' '$scratch/p.err'"
  [ "$got" -eq "$want" ] && grep -qF -- "$pattern" "$scratch/p.err" || sed 's/^/    | /' "$scratch/p.err" >&2
}

echo "the preflight names the fix"
preflight "a venv's kernel outside the sandbox" 3 "it is on the host ($venv/bin/python): add --ro-bind $venv" \
  env VIRTUAL_ENV="$venv" "$KBOUND" run --kernel venvpy 'x'
preflight "  ... in check too, before any canary or report" 3 "add --ro-bind $venv" \
  "$KBOUND" check --prefix "$venv" --kernel venvpy --json "$scratch/pre.json"
ok "  ... its report says the run was refused, naming the fix, and checked no kernel" /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["refused"] is True and r["verdict"] == "fail" and r["exit_code"] == 3, r
assert "add --ro-bind" in r["incomplete_reason"], r["incomplete_reason"]
# The kernel asked for is listed, every check not run, naming the refusal.
assert [k["name"] for k in r["kernels"]] == ["venvpy"], r["kernels"]
assert all(c["status"] == "not_run" and "add --ro-bind" in c["detail"] for c in r["kernels"][0]["checks"])' "$scratch/pre.json"
out=$("$KBOUND" run --prefix "$venv" --kernel venvpy --ro-bind "$venv" 'import sys; print(sys.prefix)' 2>"$scratch/p.err")
ok "with that --ro-bind the venv's kernel runs, as the venv (got '$out')" [ "$out" = "$venv" ]

# A console script elsewhere whose "#!" names the venv's python: both folders, checked.
mkdir -p "$scratch/tools/bin" "$scratch/k/script"
printf '#!%s/bin/python\nimport runpy\nrunpy.run_module("ipykernel_launcher", run_name="__main__")\n' "$venv" \
  >"$scratch/tools/bin/venv-kernel"
chmod 755 "$scratch/tools/bin/venv-kernel"
printf '{"argv": ["%s/tools/bin/venv-kernel", "-f", "{connection_file}"], "language": "python"}\n' "$scratch" \
  >"$scratch/k/script/kernel.json"
chmod -R a+rX "$scratch"
preflight "a console script and its #! interpreter" 3 "add --ro-bind $scratch/tools --ro-bind $venv" \
  "$KBOUND" run --kernel "$scratch/k/script" 'x'
preflight "  ... with the script's folder bound, the interpreter" 3 \
  "the interpreter '$venv/bin/python' that its program $scratch/tools/bin/venv-kernel names (its \"#!\" line) is not inside the sandbox" \
  "$KBOUND" run --kernel "$scratch/k/script" --ro-bind "$scratch/tools" 'x'
out=$("$KBOUND" run --kernel "$scratch/k/script" --ro-bind "$scratch/tools" --ro-bind "$venv" 'print(6*7)' 2>"$scratch/p.err")
ok "  ... with both bound it runs (got '$out')" [ "$out" = 42 ]

# A kernel that reads its own kernelspec folder ({resource_dir}) needs that folder.
mkdir -p "$scratch/k/res"
printf 'import runpy\nrunpy.run_module("ipykernel_launcher", run_name="__main__")\n' >"$scratch/k/res/start.py"
printf '{"argv": ["/usr/bin/python3", "{resource_dir}/start.py", "-f", "{connection_file}"], "language": "python"}\n' \
  >"$scratch/k/res/kernel.json"
chmod -R a+rX "$scratch"
preflight "a kernel that needs its kernelspec folder" 3 \
  "its kernelspec folder $scratch/k/res (argv uses {resource_dir}) is not inside the sandbox" \
  "$KBOUND" run --kernel "$scratch/k/res" 'x'
ok "  ... and names the folder to bind" grep -qF "add --ro-bind $scratch/k/res" "$scratch/p.err"

# A kernelspec inside an unpacked image, whose program only the image has: --rootfs.
mkdir -p "$scratch/img/usr/local/bin" "$scratch/img/usr/share/jupyter/kernels/imgk"
printf '#!/bin/sh\n' >"$scratch/img/usr/local/bin/kbound-image-only-kernel"
chmod 755 "$scratch/img/usr/local/bin/kbound-image-only-kernel"
printf '{"argv": ["/usr/local/bin/kbound-image-only-kernel", "{connection_file}"], "language": "python"}\n' \
  >"$scratch/img/usr/share/jupyter/kernels/imgk/kernel.json"
preflight "a kernelspec of an unpacked image" 3 \
  "check it there with --rootfs $scratch/img --kernel /usr/share/jupyter/kernels/imgk" \
  "$KBOUND" run --kernel "$scratch/img/usr/share/jupyter/kernels/imgk" 'x'

if [ "$(id -u)" -eq 0 ]; then
  echo "as an unprivileged user"
  chmod 1777 "$KBOUND_RUNTIME_DIR"
  user=$(test_user)
  as_user() { runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent LANG=C.UTF-8 \
    KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$@"; }
  preflight "kbound-test: the same fix named" 3 "add --ro-bind $venv" \
    as_user "$(user_kbound)" run --prefix "$venv" --kernel venvpy 'x'
  out=$(as_user "$(user_kbound)" run --prefix "$venv" --kernel venvpy --ro-bind "$venv" 'import sys, os; print(sys.prefix, os.getpid())' 2>"$scratch/p.err")
  ok "kbound-test: with it the venv's kernel runs (got '$out')" [ "$out" = "$venv 2" ]
  chmod 755 "$KBOUND_RUNTIME_DIR"
fi

echo "--ro-bind folders are checked too"
preflight "a --ro-bind folder that does not exist" 2 "--ro-bind $scratch/nothing: No such file or directory" \
  "$KBOUND" run --kernel python3 --ro-bind "$scratch/nothing" 'x'
if [ "$(id -u)" -eq 0 ]; then
  mkdir -m 700 "$scratch/closed"
  mkdir "$scratch/closed/venv"
  preflight "a --ro-bind folder the sandbox user cannot reach" 3 \
    "--ro-bind $scratch/closed/venv: the sandbox user $(sandbox_user) cannot reach it ($scratch/closed stops it)" \
    "$KBOUND" run --kernel python3 --ro-bind "$scratch/closed/venv" 'x'
fi
assert_no_leftovers "after the preflight runs"

finish
