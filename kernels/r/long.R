# kbound long cell: announces itself with a marker, then sleeps in short interruptible steps,
# writing their count to the progress file, which the host reads itself to see the cell stop (the
# kernel's reply is only its word). It prints nothing while it runs: IRkernel sends each message
# frame by frame from R, and a SIGINT between two frames leaves the message unfinished.
# IRkernel (via evaluate) holds stdout until the top-level expression ends unless flush(stdout()) is
# called, so the marker is flushed explicitly: kbound waits for it before interrupting.
# The interrupt condition is deliberately not caught: IRkernel must turn it into an "abort" reply.
invisible(local({
  params <- jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
  cat(as.character(params$marker), "\n", sep = "")
  flush(stdout())
  deadline <- proc.time()[["elapsed"]] + as.numeric(params$seconds)
  progress <- if (is.null(params$progress)) "" else as.character(params$progress)
  count <- 0
  while ((left <- deadline - proc.time()[["elapsed"]]) > 0) {
    Sys.sleep(min(0.05, left))
    count <- count + 1
    if (nzchar(progress)) { # renamed into place: the host never reads half a number
      writeLines(as.character(count), paste0(progress, ".new"))
      file.rename(paste0(progress, ".new"), progress)
    }
  }
  cat("kbound: long cell ran to completion\n")
  flush(stdout())
  IRdisplay::publish_mimebundle(list(`application/vnd.kbound.probe+json` = list(completed = TRUE)))
}))
