{{KBOUND_PRELUDE}}
_kbound("long")
