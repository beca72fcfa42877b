# kbound probe cell: kbound-probe (params$program, kbound's static boundary probe) makes every
# attempt; the cell relays what it prints, a line at once (the host looks on its child marker
# line), and its last line is the marked result (docs/probes-cells.md). R's pipe() runs it through
# /bin/sh, so the kernel's pid is passed. A program that fails fails the cell. Inside local().
invisible(local({
  params <- jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
  con <- pipe(paste(shQuote(params$program), "--kernel-pid", Sys.getpid(), "boundary",
                    "{{KBOUND_PARAMS_B64}}", "</dev/null"), "r")
  while (length(line <- readLines(con, n = 1L, warn = FALSE)) > 0L) {
    cat(line, "\n", sep = "")
    flush(stdout())
  }
  status <- close(con)
  if (!is.null(status) && status != 0L) stop(sprintf("kbound-probe exited with status %d", status %/% 256L))
}))
