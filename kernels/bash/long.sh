"$BASH" -c 'eval "$(printf %s "$1" | base64 -d | gzip -dc)"; _kb_long' kbound-long '{{KBOUND_PRELUDE_GZ_B64}}'
