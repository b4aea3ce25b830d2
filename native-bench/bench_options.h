/* The native-bench tools' option parsing, written once: a whole decimal number in a range, or the
 * option's range on stderr and exit 2 (no atoi: "abc" and "-5" are not 0). */
#ifndef RINGBOOK_BENCH_OPTIONS_H
#define RINGBOOK_BENCH_OPTIONS_H
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static inline long option_number(const char *name, const char *text, long lo, long hi) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "%s must be a whole number in %ld..%ld, got '%s'\n", name, lo, hi, text);
    exit(2);
  }
  return v;
}
#endif
