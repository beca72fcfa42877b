/* relay.h: kbound-syscall-probe --relay PREFIX PORT,... -- ARGV... (relay.c). */
#pragma once

/* Listens on PREFIX-PORT for each port, forks the relay (a child that dies with its parent), and
 * execs ARGV in the calling process, which keeps its pid (the sandbox's PID 2). Returns only on
 * failure: 127, having said why on stderr. */
int relay_main(int argc, char **argv);
