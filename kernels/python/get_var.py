# kbound get_var cell: reads kbound_nonce back (null when undefined) to prove the namespace survived.
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, json, os
    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))  # only result_marker
    value = globals().get("kbound_nonce")
    if value is not None and not isinstance(value, str):
        value = repr(value)  # someone rebound it; report what is there rather than claim it is missing
    _kbound_publish({"value": value, "pid": os.getpid()}, params.get("result_marker"))
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
