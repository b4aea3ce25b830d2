// loadgen's reading of an answer's head: status line, Content-Length, Transfer-Encoding and
// X-Request-Id, in one pass (loadgen.c reads the bytes; native-bench/README.md describes the tool).
#ifndef LOADGEN_HTTP_H
#define LOADGEN_HTTP_H
#include <strings.h>
#include "loadgen_common.h"
#include "loadgen_records.h"

/** One answer's head, as parse_head read it. */
typedef struct {
  int status;
  uint32_t head_bytes;  // status line + headers + the blank line
  uint64_t body_bytes;  // Content-Length (0 without one)
  uint64_t request_no;  // the X-Request-Id's number (--records only), else 0
} head_t;

enum { HEAD_INCOMPLETE = 0, HEAD_OK = 1, HEAD_BAD = -1 };

/** `name` (lower case, with its colon) at the start of the line [s, e), any case; returns the value start. */
static const uint8_t *header_value(const uint8_t *s, const uint8_t *e, const char *name, size_t nl) {
  if ((size_t)(e - s) < nl || strncasecmp((const char *)s, name, nl) != 0) return NULL;
  const uint8_t *v = s + nl;
  while (v < e && (*v == ' ' || *v == '\t')) v++;
  return v;
}

/**
 * Parses the head of the answer at b[0, avail) in one pass, a memchr per line: the status line,
 * then at each line start Content-Length, Transfer-Encoding and (with --records) X-Request-Id,
 * any case, the first of each; the head ends at an empty line ("\r\n"). HEAD_INCOMPLETE until that
 * line is in; HEAD_BAD for a malformed status line or length, or a chunked answer (uWS always
 * answers with Content-Length).
 */
static int parse_head(const uint8_t *b, uint32_t avail, int want_id, head_t *h) {
  const uint8_t *end = b + avail;
  const uint8_t *cl = NULL, *cl_end = NULL, *id = NULL, *id_end = NULL;
  int chunked = 0;
  const uint8_t *line = b;
  for (;;) {
    const uint8_t *nl = memchr(line, '\n', (size_t)(end - line));
    if (nl == NULL) return HEAD_INCOMPLETE;
    if (line != b) {
      if (nl - line == 1 && line[0] == '\r') { line = nl + 1; break; }
      const uint8_t *v;
      switch (line[0] | 0x20) {
        case 'c':
          if (cl == NULL && (v = header_value(line, nl, "content-length:", 15)) != NULL) { cl = v; cl_end = nl; }
          break;
        case 't':
          if (header_value(line, nl, "transfer-encoding:", 18) != NULL) chunked = 1;
          break;
        case 'x':
          if (want_id && id == NULL && (v = header_value(line, nl, "x-request-id:", 13)) != NULL) { id = v; id_end = nl; }
          break;
        default: break;
      }
    }
    line = nl + 1;
  }
  if (avail < 12 || memcmp(b, "HTTP/1.", 7) != 0 || b[8] != ' ' || b[9] < '0' || b[9] > '9' || b[10] < '0' || b[10] > '9' || b[11] < '0' || b[11] > '9') return HEAD_BAD;
  h->status = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
  h->head_bytes = (uint32_t)(line - b);
  h->body_bytes = 0;
  if (cl != NULL) {
    int digits = 0;
    while (cl < cl_end && *cl >= '0' && *cl <= '9' && digits < 10) { h->body_bytes = h->body_bytes * 10 + (uint64_t)(*cl - '0'); cl++; digits++; }
    if (digits == 0 || h->body_bytes > MESSAGE_BYTES_MAX) return HEAD_BAD;
  } else if (chunked) {
    return HEAD_BAD;
  }
  h->request_no = id != NULL ? request_number(id, id_end) : 0;
  return HEAD_OK;
}

#endif
