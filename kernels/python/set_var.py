# kbound set_var cell: stores the nonce in the user namespace as kbound_nonce (the only name it leaves behind).
def _kbound_cell_fn():
    import base64, json
    from IPython.display import display
    global kbound_nonce
    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))
    kbound_nonce = str(params["value"])
    display({"application/vnd.kbound.probe+json": {"ok": True}}, raw=True)
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn
