# kbound R pack: every cell is one local() holding this file (rendered with the cell's parameters)
# and one call, so only kbound_nonce reaches the global environment; invisible() keeps IRkernel from
# showing the value. Integers are as.integer() (IRkernel writes doubles with 4 digits), arrays are
# unnamed lists (length-1 vectors get unboxed). Interrupts are not caught: IRkernel makes them abort.
p <- jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
publish <- function(...) IRdisplay::publish_mimebundle(list(`application/vnd.kbound.probe+json` = list(...)))
say <- function(line) { cat(line, "\n", sep = ""); flush(stdout()) } # IRkernel holds what is not flushed
kb_identity <- function() {
  status <- tryCatch(readLines("/proc/self/status", warn = FALSE), error = function(e) character(0))
  field <- function(key) grep(paste0("^", key, ":"), status, value = TRUE)[1] # NA when absent
  int <- function(key) as.integer(strsplit(trimws(sub("^[^:]*:", "", field(key))), "[[:space:]]+")[[1]])
  first <- function(key) if (length(v <- int(key)) && !is.na(v[1])) v[1] else NA # logical NA is null; NA_integer_ "NA"
  publish(pid = as.integer(Sys.getpid()), ppid = first("PPid"), nspid = as.list(na.omit(int("NSpid"))),
          uid = first("Uid"), hostname = Sys.info()[["nodename"]])
}
kb_set_var <- function() { assign("kbound_nonce", as.character(p$value), envir = globalenv()); publish(ok = TRUE) }
kb_get_var <- function() { # undefined is null (logical NA); rebound to a non-string, its deparse
  defined <- exists("kbound_nonce", envir = globalenv(), inherits = FALSE)
  v <- if (defined) get("kbound_nonce", envir = globalenv(), inherits = FALSE) else NA
  ok <- !defined || (is.character(v) && length(v) == 1 && !is.na(v))
  publish(value = if (ok) v else paste(deparse(v), collapse = " "), pid = as.integer(Sys.getpid()))
}
kb_long <- function() { # silent between its marker and its end: a SIGINT between two frames cuts a message
  say(p$marker)
  deadline <- proc.time()[["elapsed"]] + as.numeric(p$seconds)
  progress <- if (is.null(p$progress)) "" else as.character(p$progress)
  count <- 0
  while ((left <- deadline - proc.time()[["elapsed"]]) > 0) {
    Sys.sleep(min(0.05, left))
    count <- count + 1
    if (nzchar(progress)) { # renamed into place: the host never reads half a number
      writeLines(as.character(count), paste0(progress, ".new"))
      file.rename(paste0(progress, ".new"), progress)
    }
  }
  say("kbound: long cell ran to completion")
  publish(completed = TRUE)
}
kb_run <- function(mode) { # pipe() starts it through /bin/sh, so the kernel's pid is passed
  con <- pipe(paste(shQuote(p$program), "--kernel-pid", Sys.getpid(), mode, "{{KBOUND_PARAMS_B64}}", "</dev/null"), "r")
  while (length(line <- readLines(con, n = 1L, warn = FALSE)) > 0L) say(line)
  status <- close(con)
  if (!is.null(status) && status != 0L) stop(sprintf("kbound-probe exited with status %d", status %/% 256L))
}
