// wake_cost: what waking a sleeping thread costs on this machine, the waker's side and the
// sleeper's, with the sleeper on another CPU (the wake needs an inter-processor interrupt: on a VM
// a trap to the hypervisor, and the sleeping vCPU's halt exit) and on the waker's own CPU (no
// interrupt: the sleeper is queued behind the waker). The server does such a wake for every step
// of a lone request at 1,000 requests/s (the front rings the matcher's futex doorbell, the matcher
// rings the front's loop bell, an eventfd that libuv polls), so their price is part of the light
// load's CPU per request that no JavaScript change removes (docs/performance.md).
//
//   make -C native-bench && native-bench/build/wake_cost [--wakes 3000] [--gap-us 1000] [--rounds 3]
//
// Two mechanisms: futex (FUTEX_WAKE on a word the sleeper waits on, as src/ring's doorbells) and
// eventfd (an 8-byte write the sleeper's epoll_wait sees, as the loop bell's uv_async). Two
// placements: cross (waker on the first allowed CPU, sleeper on the second) and same (both on
// the first). Each round runs the four ways in turn, so all see the same machine minutes. Per wake:
// the waker's wall time in the waking syscall, its thread CPU time over it, and the sleeper's delay
// (the waker's clock just before the syscall -> the sleeper running after its wait). Between wakes
// the waker sleeps --gap-us and waits for the sleeper's acknowledgement on a futex of its own, so
// on one CPU the sleeper runs when the waker blocks. Reports medians over rounds of each round's
// p50 / p99, and one JSON line {"bench":"wake_cost",...}. Bounded: every wait has a timeout.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"

#define WAKES_MIN 10
#define WAKES_MAX 100000
#define GAP_US_MAX 100000
#define ROUNDS_MAX 20
/* A sleeper that is not woken within this is a broken run, not a slow one. */
#define WAIT_TIMEOUT_NS 2000000000LL

enum { MECH_FUTEX, MECH_EVENTFD, MECHS };
enum { PLACE_CROSS, PLACE_SAME, PLACES };
static const char *const MECH_NAMES[MECHS] = {"futex", "eventfd"};
static const char *const PLACE_NAMES[PLACES] = {"cross", "same"};
enum { STAT_WAKER_P50, STAT_WAKER_P99, STAT_WAKER_CPU_P50, STAT_DELAY_P50, STAT_DELAY_P99, STATS };
static const char *const STAT_NAMES[STATS] = {"waker_us_p50", "waker_us_p99", "waker_cpu_us_p50", "wakee_delay_us_p50", "wakee_delay_us_p99"};

static void die(const char *what, const char *detail) {
  fprintf(stderr, "wake_cost: %s%s%s\n", what, detail[0] ? ": " : "", detail);
  exit(2);
}

static long futex(_Atomic uint32_t *w, int op, uint32_t v, int64_t timeout_ns) {
  struct timespec ts = {(time_t)(timeout_ns / 1000000000LL), (long)(timeout_ns % 1000000000LL)};
  return syscall(SYS_futex, (uint32_t *)w, op, v, timeout_ns > 0 ? &ts : NULL, NULL, 0);
}

/* Blocks until *w is non-zero, then clears it; exits on a timeout (bounded). */
static void await_flag(_Atomic uint32_t *w) {
  int64_t deadline = now_ns() + WAIT_TIMEOUT_NS;
  while (atomic_load(w) == 0) {
    int64_t left = deadline - now_ns();
    if (left <= 0) die("a wake never arrived within 2 s", "");
    futex(w, FUTEX_WAIT_PRIVATE, 0, left);
  }
  atomic_store(w, 0);
}

static void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (e != 0) die("pthread_setaffinity_np", strerror(e));
}

struct way {
  int mech, sleeper_cpu, wakes;
  _Atomic uint32_t word;   /* futex mechanism: the doorbell */
  _Atomic uint32_t ack;    /* the sleeper's acknowledgement (always a futex) */
  int efd, epfd;           /* eventfd mechanism */
  int64_t *woke_ns;        /* the sleeper's clock after each wait */
};

static void *sleeper(void *arg) {
  struct way *w = arg;
  pin_self(w->sleeper_cpu);
  for (int i = 0; i < w->wakes; i++) {
    if (w->mech == MECH_FUTEX) {
      await_flag(&w->word);
    } else {
      struct epoll_event ev;
      int n = epoll_wait(w->epfd, &ev, 1, (int)(WAIT_TIMEOUT_NS / 1000000));
      if (n != 1) die("epoll_wait: no wake within 2 s", n < 0 ? strerror(errno) : "");
      uint64_t v;
      if (read(w->efd, &v, sizeof v) != (ssize_t)sizeof v) die("eventfd read", strerror(errno));
    }
    w->woke_ns[i] = now_ns();
    atomic_store(&w->ack, 1);
    futex(&w->ack, FUTEX_WAKE_PRIVATE, 1, 0);
  }
  return NULL;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static double pct_us(int64_t *v, int n, int pct) {
  qsort(v, (size_t)n, sizeof *v, cmp_i64);
  int i = (int)((int64_t)n * pct / 100);
  if (i >= n) i = n - 1;
  return (double)v[i] / 1000.0;
}

/* One way: `wakes` wakes of a sleeper on sleeper_cpu by this thread on waker_cpu; fills out[STATS]. */
static void run_way(int mech, int waker_cpu, int sleeper_cpu, int wakes, int gap_us, double *out) {
  struct way w;
  memset(&w, 0, sizeof w);
  w.mech = mech;
  w.sleeper_cpu = sleeper_cpu;
  w.wakes = wakes;
  w.efd = w.epfd = -1;
  int64_t *wall = calloc((size_t)wakes, sizeof *wall), *cpu = calloc((size_t)wakes, sizeof *cpu);
  int64_t *start = calloc((size_t)wakes, sizeof *start);
  w.woke_ns = calloc((size_t)wakes, sizeof *w.woke_ns);
  if (!wall || !cpu || !start || !w.woke_ns) die("out of memory", "");
  if (mech == MECH_EVENTFD) {
    w.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w.efd < 0 || w.epfd < 0) die("eventfd/epoll_create1", strerror(errno));
    struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = w.efd}};
    if (epoll_ctl(w.epfd, EPOLL_CTL_ADD, w.efd, &ev) != 0) die("epoll_ctl", strerror(errno));
  }
  pin_self(waker_cpu);
  pthread_t t;
  if (pthread_create(&t, NULL, sleeper, &w) != 0) die("pthread_create", strerror(errno));
  const uint64_t one = 1;
  for (int i = 0; i < wakes; i++) {
    struct timespec gap = {0, (long)gap_us * 1000L};
    if (gap_us > 0) nanosleep(&gap, NULL);
    int64_t c0 = cpu_ns(), t0 = now_ns();
    if (mech == MECH_FUTEX) {
      atomic_store(&w.word, 1);
      futex(&w.word, FUTEX_WAKE_PRIVATE, 1, 0);
    } else if (write(w.efd, &one, sizeof one) != (ssize_t)sizeof one) {
      die("eventfd write", strerror(errno));
    }
    int64_t t1 = now_ns(), c1 = cpu_ns();
    start[i] = t0;
    wall[i] = t1 - t0;
    cpu[i] = c1 - c0;
    await_flag(&w.ack);
  }
  pthread_join(t, NULL);
  for (int i = 0; i < wakes; i++) w.woke_ns[i] -= start[i];
  out[STAT_WAKER_P50] = pct_us(wall, wakes, 50);
  out[STAT_WAKER_P99] = pct_us(wall, wakes, 99);
  out[STAT_WAKER_CPU_P50] = pct_us(cpu, wakes, 50);
  out[STAT_DELAY_P50] = pct_us(w.woke_ns, wakes, 50);
  out[STAT_DELAY_P99] = pct_us(w.woke_ns, wakes, 99);
  if (w.efd >= 0) close(w.efd);
  if (w.epfd >= 0) close(w.epfd);
  free(wall);
  free(cpu);
  free(start);
  free(w.woke_ns);
}

static int whole_arg(const char *name, const char *v, int lo, int hi) {
  char *end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x < lo || x > hi) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s must be a whole number in %d..%d", name, lo, hi);
    die(msg, v);
  }
  return (int)x;
}

static double median(double *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double s = v[j];
      v[j] = v[j - 1];
      v[j - 1] = s;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  int wakes = 3000, gap_us = 1000, rounds = 3;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) die("an option needs a value", argv[i]);
    if (strcmp(argv[i], "--wakes") == 0) wakes = whole_arg("--wakes", argv[++i], WAKES_MIN, WAKES_MAX);
    else if (strcmp(argv[i], "--gap-us") == 0) gap_us = whole_arg("--gap-us", argv[++i], 0, GAP_US_MAX);
    else if (strcmp(argv[i], "--rounds") == 0) rounds = whole_arg("--rounds", argv[++i], 1, ROUNDS_MAX);
    else die("unknown option (--wakes, --gap-us, --rounds)", argv[i]);
  }
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) die("sched_getaffinity", strerror(errno));
  int cpus[2] = {-1, -1}, found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
    if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
  int places = found >= 2 ? PLACES : 1; /* one CPU allowed: no cross placement to measure */
  static double r[ROUNDS_MAX][MECHS][PLACES][STATS];
  for (int k = 0; k < rounds; k++)
    for (int p = 0; p < places; p++)
      for (int m = 0; m < MECHS; m++)
        run_way(m, cpus[0], p == PLACE_CROSS ? cpus[1] : cpus[0], wakes, gap_us, r[k][m][p]);
  double med[MECHS][PLACES][STATS];
  for (int m = 0; m < MECHS; m++)
    for (int p = 0; p < places; p++)
      for (int s = 0; s < STATS; s++) {
        double col[ROUNDS_MAX];
        for (int k = 0; k < rounds; k++) col[k] = r[k][m][p][s];
        med[m][p][s] = median(col, rounds);
      }
  for (int m = 0; m < MECHS; m++)
    for (int p = 0; p < places; p++)
      printf("%-7s %-5s waker %.2f us p50 (%.2f p99, CPU %.2f), sleeper running %.2f us p50 (%.2f p99) after the waker's stamp\n",
             MECH_NAMES[m], PLACE_NAMES[p], med[m][p][STAT_WAKER_P50], med[m][p][STAT_WAKER_P99], med[m][p][STAT_WAKER_CPU_P50],
             med[m][p][STAT_DELAY_P50], med[m][p][STAT_DELAY_P99]);
  printf("{\"bench\":\"wake_cost\",\"wakes\":%d,\"gap_us\":%d,\"rounds\":%d,\"cpus\":[%d,%d]", wakes, gap_us, rounds, cpus[0], cpus[1]);
  for (int m = 0; m < MECHS; m++) {
    printf(",\"%s\":{", MECH_NAMES[m]);
    for (int p = 0; p < PLACES; p++) {
      printf("%s\"%s\":", p ? "," : "", PLACE_NAMES[p]);
      if (p >= places) {
        printf("null");
        continue;
      }
      printf("{");
      for (int s = 0; s < STATS; s++) printf("%s\"%s\":%.2f", s ? "," : "", STAT_NAMES[s], med[m][p][s]);
      printf("}");
    }
    printf("}");
  }
  for (int m = 0; m < MECHS; m++) {
    if (places < PLACES) printf(",\"%s_cross_over_same_waker\":null", MECH_NAMES[m]);
    else printf(",\"%s_cross_over_same_waker\":%.2f", MECH_NAMES[m], med[m][PLACE_CROSS][STAT_WAKER_P50] / med[m][PLACE_SAME][STAT_WAKER_P50]);
  }
  printf("}\n");
  return 0;
}
