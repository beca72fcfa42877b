# kbound set_var cell: stores the nonce in the user namespace as kbound_nonce (the only name it leaves behind).
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, json
    global kbound_nonce
    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))
    kbound_nonce = str(params["value"])
    _kbound_publish({"ok": True}, params.get("result_marker"))
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
