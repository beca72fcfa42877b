invisible(local({ {{KBOUND_PRELUDE}}
kb_run("attack-surface") }))
