# kbound identity cell: reports who and where the kernel process is.
# Everything runs inside local() so the global environment is left as it was; invisible() stops
# IRkernel from displaying the value. Integers are as.integer() because IRkernel serialises doubles
# with jsonlite's default of 4 digits; arrays are unnamed lists because length-1 vectors get unboxed.
invisible(local({
  jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
  status <- tryCatch(readLines("/proc/self/status", warn = FALSE), error = function(e) character(0))
  field <- function(key) {
    line <- grep(paste0("^", key, ":"), status, value = TRUE)
    if (length(line) == 0) return(character(0))
    strsplit(trimws(sub("^[^:]*:", "", line[1])), "[[:space:]]+")[[1]]
  }
  first_int <- function(key) { v <- field(key); if (length(v) > 0) as.integer(v[1]) else NA }
  IRdisplay::publish_mimebundle(list(`application/vnd.kbound.probe+json` = list(
    pid = as.integer(Sys.getpid()), ppid = first_int("PPid"), nspid = as.list(as.integer(field("NSpid"))),
    uid = first_int("Uid"), hostname = Sys.info()[["nodename"]])))
}))
