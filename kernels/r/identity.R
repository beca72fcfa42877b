invisible(local({ {{KBOUND_PRELUDE}}
kb_identity() }))
