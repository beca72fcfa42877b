# kbound probe cell: kbound-probe (params["program"], kbound's static boundary probe) makes every
# attempt; the cell relays what it prints, at once (the host looks on its child marker line), and
# its last line is the marked result (docs/probes-cells.md). A program that fails fails the cell.
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, json, os, subprocess, sys

    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))
    argv = [params["program"], "--kernel-pid", str(os.getpid()), "boundary", "{{KBOUND_PARAMS_B64}}"]
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE) as child:
        for line in child.stdout:
            sys.stdout.write(line.decode("utf-8", "replace"))
            sys.stdout.flush()
    if child.returncode != 0:
        raise RuntimeError("kbound-probe exited with status %d" % child.returncode)
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
