// loadgen --slice-us N: the generator's own EEVDF slice request (Linux >= 6.12), the same call as
// the server's threads.matcher_slice_us (native/thread_slice.c): sched_setattr's sched_runtime on
// the calling thread, keeping its policy and nice value, read back with sched_getattr. loadgen is
// one thread; a short slice gets it onto a core sooner when its timer fires for the next scheduled
// send (a late send counts in the measured latency: it is measured from the scheduled time), at
// the price of being preempted sooner. This changes the measuring tool, not the server: a figure
// taken with it is the tool's effect and is reported as such (the JSON line's slice_us).
// A refusal or a slice the kernel reports differently (clamped, or ignored before 6.12) stops the
// run (exit 2): a measurement must not claim a slice it did not have.
#ifndef LOADGEN_SLICE_H
#define LOADGEN_SLICE_H
#include <sys/syscall.h>
#include <unistd.h>
#include "loadgen_common.h"

/** The kernel's clamp of a slice request (kernel/sched/syscalls.c): 0.1..100 ms. */
#define SLICE_US_MIN 100.0
#define SLICE_US_MAX 100000.0

#include "../native/sched_attr.h"

/** The calling thread's slice in ns as the kernel reports it (sched_getattr's sched_runtime). */
static uint64_t own_slice_ns(struct rb_sched_attr *a) {
  memset(a, 0, sizeof *a);
  if (syscall(SYS_sched_getattr, 0, a, (unsigned)sizeof *a, 0u) != 0) die("--slice-us: sched_getattr: %s", strerror(errno));
  return a->sched_runtime;
}

/** Asks for a slice of `us` µs for this thread; returns the slice it had before (µs). Dies unless the kernel reports `us` afterwards. */
static double set_own_slice_us(double us) {
  struct rb_sched_attr a;
  uint64_t before_ns = own_slice_ns(&a);
  if (a.sched_policy != RB_SCHED_OTHER && a.sched_policy != RB_SCHED_BATCH) die("--slice-us: policy %u takes no slice (only SCHED_OTHER and SCHED_BATCH do)", a.sched_policy);
  uint64_t want_ns = (uint64_t)(us * 1000.0);
  if (rb_set_slice(0, &a, want_ns) != 0) die("--slice-us: sched_setattr: %s", strerror(errno));
  uint64_t now_ns = own_slice_ns(&a);
  if (now_ns != want_ns) die("--slice-us %g: the kernel reports a slice of %.1f us afterwards (Linux >= 6.12 takes 100..100000 us)", us, (double)now_ns / 1000.0);
  return (double)before_ns / 1000.0;
}

#endif
