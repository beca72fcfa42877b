invisible(local({ {{KBOUND_PRELUDE}}
kb_run("boundary") }))
