// loadgen's input: the request file (format in loadgen.c's header and native-bench/README.md),
// or one GET repeated (--repeat-get), as one queue of requests per lane.
#ifndef LOADGEN_INPUT_H
#define LOADGEN_INPUT_H
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "loadgen_common.h"

/**
 * A lane's requests, read IN PLACE from the mapped file: `first` is its first record ({u8 kind,
 * u32 length, bytes}, validated once by load_request_file) and the next follows each record's
 * bytes. No array of pointers per request: that was one more cache line to miss per send
 * (16 bytes per request of a 10-40 MB pool read once).
 */
typedef struct {
  const uint8_t *first;
  uint32_t n;
  int repeat; // --repeat-get: the one record at `first` stands for every request
} req_queue_t;

/** Bytes of a record's head in the request file: u8 kind, u32 length. */
#define REC_HEAD_BYTES 5u

// ---- request file ----

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/** The length of the record at `rec` (unaligned, little-endian: one load on x86-64 and arm64). */
static uint32_t rec_len(const uint8_t *rec) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t v;
  memcpy(&v, rec + 1, sizeof v);
  return v;
#else
  return rd32(rec + 1);
#endif
}

static req_queue_t *load_request_file(const char *path, int *nlanes, uint64_t *nreqs) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) die("cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) die("cannot stat %s: %s", path, strerror(errno));
  uint64_t size = (uint64_t)st.st_size;
  if (size < 16) die("%s: too short for a request file (%llu bytes)", path, (unsigned long long)size);
  if (size > FILE_BYTES_MAX) die("%s: larger than %llu bytes", path, (unsigned long long)FILE_BYTES_MAX);
  const uint8_t *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) die("cannot map %s: %s", path, strerror(errno));
  close(fd);
  if (memcmp(m, "RBLG0001", 8) != 0) die("%s: not a loadgen request file (magic RBLG0001 missing)", path);
  uint32_t n = rd32(m + 8);
  if (n < 1 || n > CONNECTIONS_MAX) die("%s: lane count %u not in [1, %d]", path, n, CONNECTIONS_MAX);
  req_queue_t *lanes = calloc(n, sizeof *lanes);
  if (lanes == NULL) die("out of memory");
  uint64_t at = 16, total = 0;
  for (uint32_t l = 0; l < n; l++) {
    if (at + 4 > size) die("%s: truncated at lane %u", path, l);
    uint32_t c = rd32(m + at);
    at += 4;
    if (total + c > REQUESTS_MAX) die("%s: more than %llu requests", path, (unsigned long long)REQUESTS_MAX);
    // Each record is at least 5 bytes: a count larger than the rest of the file is corrupt.
    if ((uint64_t)c * 5 > size - at) die("%s: lane %u claims %u requests, more than the file holds", path, l, c);
    lanes[l].first = m + at;
    lanes[l].n = c;
    for (uint32_t i = 0; i < c; i++) {
      if (at + 5 > size) die("%s: truncated in lane %u request %u", path, l, i);
      uint8_t kind = m[at];
      uint32_t len = rd32(m + at + 1);
      at += 5;
      if (kind >= KINDS) die("%s: lane %u request %u has kind %u (0..%d)", path, l, i, kind, KINDS - 1);
      if (len == 0 || len > MESSAGE_BYTES_MAX || len > size - at) die("%s: lane %u request %u has a bad length %u", path, l, i, len);
      at += len;
    }
    total += c;
  }
  if (at != size) die("%s: %llu trailing bytes after the last lane", path, (unsigned long long)(size - at));
  *nlanes = (int)n;
  *nreqs = total;
  return lanes;
}

/** --repeat-get: every lane repeats one GET (one request record per lane, sent again and again). */
static req_queue_t *repeat_get_queues(const char *path, int n, uint64_t max_requests, uint64_t *nreqs) {
  // One record in the file's own format, so a lane reads it as it reads a mapped file's.
  static uint8_t rec[REC_HEAD_BYTES + 512];
  char *text = (char *)rec + REC_HEAD_BYTES;
  int tl = snprintf(text, sizeof rec - REC_HEAD_BYTES, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
  if (tl <= 0 || (size_t)tl >= sizeof rec - REC_HEAD_BYTES) die("--repeat-get PATH too long");
  rec[0] = 3;
  for (int i = 0; i < 4; i++) rec[1 + i] = (uint8_t)((uint32_t)tl >> (8 * i));
  req_queue_t *lanes = calloc((size_t)n, sizeof *lanes);
  if (lanes == NULL) die("out of memory");
  uint64_t per = (max_requests + (uint64_t)n - 1) / (uint64_t)n;
  if (per > UINT32_MAX) per = UINT32_MAX;
  for (int l = 0; l < n; l++) {
    lanes[l].first = rec;
    lanes[l].repeat = 1;
    lanes[l].n = (uint32_t)per;
  }
  *nreqs = per * (uint64_t)n;
  return lanes;
}

#endif
