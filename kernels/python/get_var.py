{{KBOUND_PRELUDE}}
_kbound("get_var")
