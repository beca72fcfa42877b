{{KBOUND_PRELUDE}}
_kbound("attack_surface")
