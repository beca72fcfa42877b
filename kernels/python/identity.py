{{KBOUND_PRELUDE}}
_kbound("identity")
