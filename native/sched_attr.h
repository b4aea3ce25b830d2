// struct sched_attr for sched_setattr/sched_getattr (no glibc wrapper), shared by the server's
// threads.matcher_slice_us (native/thread_slice.c) and the load generator's --slice-us
// (native-bench/loadgen_slice.h), so both ask the kernel the same way.
#ifndef RB_SCHED_ATTR_H
#define RB_SCHED_ATTR_H
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

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

/**
 * Asks the kernel for a slice of `runtime_ns` for thread `tid` (0: the caller), keeping the policy,
 * nice value and reset-on-fork flag that `now` (its sched_getattr) reports. Returns 0, or -1 with
 * errno set by sched_setattr. The caller checks the policy first (only SCHED_OTHER and SCHED_BATCH
 * take a slice) and reads the slice back afterwards.
 */
static inline int rb_set_slice(pid_t tid, const struct rb_sched_attr *now, uint64_t runtime_ns) {
  struct rb_sched_attr set;
  memset(&set, 0, sizeof set);
  set.size = RB_SCHED_ATTR_SIZE_VER0;
  set.sched_policy = now->sched_policy;
  set.sched_flags = now->sched_flags & RB_SCHED_FLAG_RESET_ON_FORK;
  set.sched_nice = now->sched_nice;
  set.sched_runtime = runtime_ns;
  return (int)syscall(SYS_sched_setattr, tid, &set, 0u);
}

#endif
