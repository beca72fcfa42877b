{{KBOUND_PRELUDE}}
_kbound("set_var")
