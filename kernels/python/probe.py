{{KBOUND_PRELUDE}}
_kbound("probe")
