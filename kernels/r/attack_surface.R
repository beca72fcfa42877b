# kbound attack-surface probe cell: runs kbound-syscall-probe (params$program, a path inside the
# sandbox), the static program every language's cell spawns. In its own single-threaded process it
# tries each call and socket family of kbound's seccomp table with arguments that do nothing
# whether the call is allowed or refused, and prints one JSON object (docs/seccomp.md), published
# here as it is. R has no way to make a raw system call, so there are no in-process tries: the
# host's own look at /proc/<pid>/status covers the kernel's process. The cell knows nothing of the
# filter: kbound's host side judges. Everything runs inside local() so the global environment is
# left as it was.
# Serialisation (IRkernel uses jsonlite::toJSON(auto_unbox = TRUE, digits = 4)): the program's JSON
# nulls become logical NA, since a NULL list element would be written as {}; its arrays stay
# unnamed lists, which are never unboxed.
invisible(local({
  params <- jsonlite::fromJSON(rawToChar(jsonlite::base64_dec("{{KBOUND_PARAMS_B64}}")), simplifyVector = FALSE)
  errors <- list()

  guard <- function(name, fn, fallback) {
    tryCatch(fn(), error = function(e) {
      errors[[length(errors) + 1L]] <<- list(probe = name, error = conditionMessage(e))
      fallback
    })
  }
  nulls_to_na <- function(x) {
    if (is.null(x)) return(NA)
    if (!is.list(x) || length(x) == 0L) return(x)
    lapply(x, nulls_to_na)  # keeps the names, so objects stay objects
  }
  timeout <- max(1, as.numeric(if (is.null(params$timeout_ms)) 10000 else params$timeout_ms) / 1000)

  run_program <- function() {
    program <- params$program
    if (!is.character(program) || length(program) != 1L || !nzchar(program)) stop("no program given")
    # said here, because system2 says only "error in running command" for a program it cannot run
    if (!file.exists(program)) stop("ENOENT")
    if (file.access(program, 1L) != 0L) stop("EACCES")
    err <- tempfile("kbound-syscall-probe-")
    on.exit(unlink(err))
    # system2 runs the command through sh and quotes it itself. A non-zero exit is a warning with
    # a "status" attribute on the output, a timeout status 124.
    out <- suppressWarnings(system2(program, character(0), stdout = TRUE, stderr = err,
                                    stdin = "", timeout = timeout))
    status <- attr(out, "status")
    if (!is.null(status) && status != 0L) {
      if (status == 124L) stop("ETIMEDOUT")
      tail <- if (file.exists(err)) paste(readLines(err, warn = FALSE), collapse = "\n") else ""
      stop(sprintf("exit status %d: %s", as.integer(status), substr(tail, 1L, 400L)))
    }
    parsed <- tryCatch(jsonlite::fromJSON(paste(out, collapse = "\n"), simplifyVector = FALSE),
                       error = function(e) stop("unreadable output: ", conditionMessage(e)))
    if (!is.list(parsed) || is.null(names(parsed))) stop("the output is not a JSON object")
    nulls_to_na(parsed)
  }
  child <- guard("child", run_program, NA)

  IRdisplay::publish_mimebundle(list(`application/vnd.kbound.probe+json` = list(
    child = child, errors = errors)))
}))
