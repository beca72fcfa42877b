# kbound attack-surface cell: kbound-probe (params["program"]), a single-threaded child that
# inherits the kernel's seccomp filter, tries each refused call and socket family of kbound's table;
# the cell relays its marked result line (docs/probes-cells.md). The host proves the kernel's own
# threads run under the same filter from /proc (docs/seccomp.md). A program that fails fails the cell.
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, json, os, subprocess, sys

    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))
    argv = [params["program"], "--kernel-pid", str(os.getpid()), "attack-surface", "{{KBOUND_PARAMS_B64}}"]
    child = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, timeout=60)
    sys.stdout.write(child.stdout.decode("utf-8", "replace"))
    sys.stdout.flush()
    if child.returncode != 0:
        raise RuntimeError("kbound-probe exited with status %d" % child.returncode)
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
