/* pipelined_append's modelled journal (the model: pipelined_append.c's header): the phase's state,
 * one batch written as wal.ts writes a record, the writer threads of the pipeK modes, and the
 * matcher loop that forms batches of the arrived requests and writes them itself (serial) or hands
 * them off. Apart from the figures (pipelined_append_figures.h) and the options and report (the .c)
 * to keep each file to one job. */
#ifndef PIPELINED_APPEND_RUN_H
#define PIPELINED_APPEND_RUN_H
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"

#define PAGE 4096
#define HEADER_BYTES 40          /* wal.ts WAL_HEADER_BYTES */
#define MAX_BATCH_PAGES 16       /* a batch stops growing at 64 KB (the journal's are larger, rarer) */
#define MAX_DEPTH 8
#define WARM_REQUESTS 200

typedef struct { char name[16]; int depth; } mode_desc;

/* One phase's state: per request (sched, bytes, batch) and per batch (stamps, place). */
static struct {
  int64_t *sched, *handoff, *issue, *done, *ack, *offset;
  int32_t *bytes, *batch, *first, *count, *pages, *tid;
  int fd;
  FILE *records;
  pthread_mutex_t mu;
  pthread_cond_t work, freed;
  int queue_head, queue_tail, inflight, stop;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .freed = PTHREAD_COND_INITIALIZER};

static char zeros[PAGE];

static void die(const char *what) {
  perror(what);
  exit(1);
}

/* One batch written as wal.ts writes a record: header, body, zeros to the page, one pwritev. */
static void write_batch(int b, char *buf) {
  long body = 0;
  for (int r = S.first[b]; r < S.first[b] + S.count[b]; r++) body += S.bytes[r];
  size_t whole = (size_t)S.pages[b] * PAGE, pad = whole - HEADER_BYTES - (size_t)body;
  memset(buf, (char)b, HEADER_BYTES + (size_t)body);
  struct iovec iov[3] = {{buf, HEADER_BYTES}, {buf + HEADER_BYTES, (size_t)body}, {zeros, pad}};
  S.tid[b] = (int32_t)gettid();
  S.issue[b] = now_ns();
  ssize_t w = pwritev(S.fd, iov, pad ? 3 : 2, S.offset[b]);
  S.done[b] = now_ns();
  if (w != (ssize_t)whole) die("pwritev");
}

static void *writer(void *arg) {
  char *buf = arg;
  pthread_mutex_lock(&S.mu);
  for (;;) {
    while (S.queue_head == S.queue_tail && !S.stop) pthread_cond_wait(&S.work, &S.mu);
    if (S.queue_head == S.queue_tail) break;
    int b = S.queue_head++;
    pthread_mutex_unlock(&S.mu);
    write_batch(b, buf);
    pthread_mutex_lock(&S.mu);
    S.inflight--;
    pthread_cond_signal(&S.freed);
  }
  pthread_mutex_unlock(&S.mu);
  return NULL;
}

/* Runs one phase's n requests at `rate` in `mode`: fills S's per request and per batch stamps and
 * returns the number of batches (their writers joined). */
static int run_batches(const mode_desc *mode, long n, long rate, long file_bytes, char **bufs) {
  S.queue_head = S.queue_tail = S.inflight = S.stop = 0;
  pthread_t th[MAX_DEPTH];
  for (int k = 0; k < mode->depth; k++)
    if (pthread_create(&th[k], NULL, writer, bufs[k]) != 0) die("pthread_create");
  int64_t t0 = now_ns() + 20000000LL, interval = 1000000000LL / rate;
  for (long i = 0; i < n; i++) S.sched[i] = t0 + i * interval;
  long next = 0, arrived = 0, offset = 0;
  int nb = 0;
  while (next < n) {
    int64_t now = now_ns();
    while (arrived < n && S.sched[arrived] <= now) arrived++;
    if (arrived == next) {
      struct timespec due = {S.sched[arrived] / 1000000000LL, S.sched[arrived] % 1000000000LL};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR) {}
      continue;
    }
    if (mode->depth > 0) {
      pthread_mutex_lock(&S.mu);
      if (S.inflight >= mode->depth) { /* every writer busy: wait for one, then take all arrived */
        pthread_cond_wait(&S.freed, &S.mu);
        pthread_mutex_unlock(&S.mu);
        continue;
      }
      pthread_mutex_unlock(&S.mu);
    }
    int b = nb++;
    long body = 0, r = next;
    while (r < arrived && (HEADER_BYTES + body + S.bytes[r] + PAGE - 1) / PAGE <= MAX_BATCH_PAGES) {
      body += S.bytes[r];
      S.batch[r++] = b;
    }
    S.first[b] = (int32_t)next;
    S.count[b] = (int32_t)(r - next);
    S.pages[b] = (int32_t)((HEADER_BYTES + body + PAGE - 1) / PAGE);
    if (offset + (long)S.pages[b] * PAGE > file_bytes) offset = 0;
    S.offset[b] = offset;
    offset += (long)S.pages[b] * PAGE;
    next = r;
    S.handoff[b] = now_ns(); /* after the check for a free writer: the previous may have finished since `now` */
    if (mode->depth == 0) {
      write_batch(b, bufs[0]);
    } else {
      pthread_mutex_lock(&S.mu);
      S.inflight++;
      S.queue_tail++;
      pthread_cond_signal(&S.work);
      pthread_mutex_unlock(&S.mu);
    }
  }
  pthread_mutex_lock(&S.mu);
  S.stop = 1;
  pthread_cond_broadcast(&S.work);
  pthread_mutex_unlock(&S.mu);
  for (int k = 0; k < mode->depth; k++) pthread_join(th[k], NULL);
  return nb;
}
#endif
