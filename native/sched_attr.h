// struct sched_attr for sched_setattr/sched_getattr (no glibc wrapper), shared by the server's
// threads.matcher_slice_us (native/thread_slice.c) and the load generator's --slice-us
// (native-bench/loadgen_slice.h), so both ask the kernel the same way.
#ifndef RB_SCHED_ATTR_H
#define RB_SCHED_ATTR_H
#include <stdint.h>

/* include/uapi/linux/sched/types.h (its header clashes with glibc's <sched.h>). */
struct rb_sched_attr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};
#define RB_SCHED_ATTR_SIZE_VER0 48 /* up to sched_period: no utilization clamps */
#define RB_SCHED_OTHER 0
#define RB_SCHED_BATCH 3
#define RB_SCHED_FLAG_RESET_ON_FORK 0x01

#endif
