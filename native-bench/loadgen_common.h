// loadgen's shared pieces: limits, the error exit, the clock (loadgen.c is the program;
// native-bench/README.md describes it).
#ifndef LOADGEN_COMMON_H
#define LOADGEN_COMMON_H
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"

// ---- limits (every loop and buffer is bounded) ----
/** Longest timed window: 10 minutes (the load bench uses 10 s phases). */
#define DURATION_MS_MAX 600000.0
/** Longest wait for outstanding answers after the window. */
#define DRAIN_MS_MAX 60000.0
/** Most requests one run may send (50 M x ~450 bytes would already be a 22 GB file). */
#define REQUESTS_MAX 50000000ULL
/** Most connections (each is one fd; the bench uses 256). */
#define CONNECTIONS_MAX 4096
/** Highest fixed rate, requests per second. */
#define RATE_MAX 1000000.0
/** Largest request file: 8 GiB. */
#define FILE_BYTES_MAX (8ULL << 30)
/** Largest single request or response: 16 MiB (the server refuses bodies over 16 KiB). */
#define MESSAGE_BYTES_MAX (16u << 20)
/** First size of a connection's own read buffer (only an answer split across reads goes there). */
#define READ_BUF_INITIAL 16384u
/** The one read buffer every connection reads into first; answers are ~200-600 bytes. */
#define READ_SHARED_BYTES 65536u
/** Most recvs for one readiness event before the other connections get their turn. */
#define READS_PER_EVENT_MAX 16
#define KINDS 4
#define ERROR_CODES_MAX 32
#define ERROR_CODE_LEN_MAX 40
#define EVENTS_PER_WAIT 512
/**
 * Open mode's early wake (--spin-us): the schedule's timer is armed this many µs before a due send
 * and the generator spins on the clock to it, because the timer's interrupt reaches this VM's
 * guest ~22 µs after expiry and the send follows ~45 µs after (docs/benchmarks.md, h26g).
 * A spin is at most SPIN_US_MAX of a core per scheduled send.
 */
#define SPIN_US_DEFAULT 50
#define SPIN_US_DEFAULT_TEXT "50"
#define SPIN_US_MAX 1000.0
/**
 * The most of each scheduled interval (1 / rate) a spin may take: above 1e6 / (4 x spin_us) requests/s
 * the early wake shrinks to a quarter of the interval, so spinning never takes more than a quarter
 * of a core whatever the rate (at 20,000/s a 50 us spin would leave the generator spinning always).
 */
#define SPIN_INTERVAL_SHARE 0.25
/** Most provided receive buffers of the io_uring backend (a power of two; a kernel limit is 32768; --recv-buffers). */
#define URING_BUFS_MAX 8192u

/** Bad options, input or environment: a message on stderr and exit status 2. */
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("loadgen: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}



#endif
