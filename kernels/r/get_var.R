invisible(local({ {{KBOUND_PRELUDE}}
kb_get_var() }))
