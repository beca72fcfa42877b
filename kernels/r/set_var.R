# kbound set_var cell: stores the nonce in the global environment as kbound_nonce (the only name it leaves).
invisible(local({
  params <- jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
  assign("kbound_nonce", as.character(params$value), envir = globalenv())
  IRdisplay::publish_mimebundle(list(`application/vnd.kbound.probe+json` = list(ok = TRUE)))
}))
