invisible(local({ {{KBOUND_PRELUDE}}
kb_set_var() }))
