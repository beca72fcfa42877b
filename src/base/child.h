/* child.h: a function run in a forked child of the caller's, whose answer the caller reads back
 * over a pipe (kb_sysabi_accepted's try of an ABI, inspect_filter.c's child that loads a filter to
 * be read). libc only: the static programs compile it in with sysabi.c. Internal to the library. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* What the child runs: writes its answer to answer_fd (the pipe's write end) and returns the status
 * it exits with, or never returns (a child that waits to be looked at). It runs in a fork of a
 * process that may have threads: async-signal-safe calls only. */
typedef int kb_child_fn(int answer_fd, void *arg);

/* Forks a child that runs fn(answer_fd, arg) and exits with what it returns, and reads its answer:
 * one read of up to size bytes into buf (retried on EINTR), which ends when the child has written
 * or has closed the pipe by exiting. *ret_got is what read returned (the bytes, 0 when the child
 * wrote nothing, -1 on an error of the read). The child is the caller's to reap (it may still run).
 * Returns its pid, or -errno from pipe2 or fork (no child, nothing left open). */
pid_t kb_child_answer(kb_child_fn *fn, void *arg, void *buf, size_t size, ssize_t *ret_got);
