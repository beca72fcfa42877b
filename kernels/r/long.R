# kbound long cell: announces itself with a marker, then sleeps in short interruptible steps,
# printing a tick after each.
# IRkernel (via evaluate) holds stdout until the top-level expression ends unless flush(stdout()) is
# called, so the marker is flushed explicitly: kbound waits for it before interrupting.
# The interrupt condition is deliberately not caught: IRkernel must turn it into an "abort" reply.
invisible(local({
  params <- jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
  cat(as.character(params$marker), "\n", sep = "")
  flush(stdout())
  deadline <- proc.time()[["elapsed"]] + as.numeric(params$seconds)
  tick <- if (is.null(params$tick)) "" else as.character(params$tick)
  while ((left <- deadline - proc.time()[["elapsed"]]) > 0) {
    Sys.sleep(min(0.05, left))
    if (nzchar(tick)) { # progress: kbound sees at once that an interrupt left the cell running
      cat(tick, "\n", sep = "")
      flush(stdout())
    }
  }
  cat("kbound: long cell ran to completion\n")
  flush(stdout())
  IRdisplay::publish_mimebundle(list(`application/vnd.kbound.probe+json` = list(completed = TRUE)))
}))
