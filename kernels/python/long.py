# kbound long cell: announces itself with a marker, then sleeps in short interruptible steps,
# writing their count to the progress file, which the host reads itself to see the cell stop (the
# kernel's reply is only its word). It prints nothing while it runs.
# KeyboardInterrupt is deliberately not caught: the kernel must turn it into an error reply.
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, json, os, sys, time
    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))
    sys.stdout.write(str(params["marker"]) + "\n")
    sys.stdout.flush()  # kbound waits for the marker before interrupting
    deadline = time.monotonic() + float(params["seconds"])
    progress, count = str(params.get("progress") or ""), 0
    while time.monotonic() < deadline:
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        count += 1
        if progress:  # renamed into place: the host never reads half a number
            with open(progress + ".new", "w") as f:
                f.write(str(count))
            os.replace(progress + ".new", progress)
    sys.stdout.write("kbound: long cell ran to completion\n")
    sys.stdout.flush()
    _kbound_publish({"completed": True}, params.get("result_marker"))
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
