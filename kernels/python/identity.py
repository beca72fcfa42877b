# kbound identity cell: reports who and where the kernel process is.
# Everything lives in one function that is deleted afterwards, so the user namespace is left as it was.
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, json, os, socket
    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))  # only result_marker
    nspid = []
    try:
        with open("/proc/self/status", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    nspid = [int(x) for x in line.split()[1:]]
    except OSError:
        pass
    _kbound_publish({
        "pid": os.getpid(), "ppid": os.getppid(), "nspid": nspid,
        "uid": os.getuid(), "hostname": socket.gethostname()}, params.get("result_marker"))
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
