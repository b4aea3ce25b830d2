/* The native-bench tools' clocks, written once: CLOCK_MONOTONIC for intervals and stamps another
 * thread compares (the same clock on every thread), and the calling thread's CPU time. */
#ifndef RINGBOOK_BENCH_CLOCK_H
#define RINGBOOK_BENCH_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#endif
