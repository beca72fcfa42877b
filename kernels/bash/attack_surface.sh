( eval "$(printf %s '{{KBOUND_PRELUDE_GZ_B64}}' | base64 -d | gzip -dc)"; _kb_run_probe attack-surface )
