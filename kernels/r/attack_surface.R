# kbound attack-surface cell: kbound-probe (params$program), a single-threaded child inheriting
# the kernel's seccomp filter, tries each refused call and socket family of kbound's table (R makes
# no raw calls: the host proves the kernel's own filter from /proc). Its last line is the marked result;
# pipe() runs it through /bin/sh, so the kernel's pid is passed. A failing program fails the cell.
invisible(local({
  params <- jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
  con <- pipe(paste(shQuote(params$program), "--kernel-pid", Sys.getpid(), "attack-surface",
                    "{{KBOUND_PARAMS_B64}}", "</dev/null"), "r")
  while (length(line <- readLines(con, n = 1L, warn = FALSE)) > 0L) {
    cat(line, "\n", sep = "")
    flush(stdout())
  }
  status <- close(con)
  if (!is.null(status) && status != 0L) stop(sprintf("kbound-probe exited with status %d", status %/% 256L))
}))
