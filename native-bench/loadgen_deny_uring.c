// loadgen_deny_uring: runs a command with io_uring_setup refused, as a sandbox refuses it (a
// container's seccomp profile answers EPERM, a kernel built without io_uring or a filter ENOSYS).
// For the tests of loadgen's fallback (test/bench/loadgen_io.test.ts): `--io auto` must turn to
// epoll and say why, `--io io_uring` must fail, and the tests' own probe must see the refusal:
// on a machine that gives io_uring, nothing else makes those paths run.
// A seccomp filter (no privileges needed: PR_SET_NO_NEW_PRIVS first) refuses the one syscall with
// the errno asked for and lets every other through; exec keeps it for the command.
// Usage: loadgen_deny_uring EPERM|ENOSYS COMMAND [ARGS...]; exit 2 when the filter cannot be set.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH_NOW AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH_NOW AUDIT_ARCH_AARCH64
#endif

int main(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: loadgen_deny_uring EPERM|ENOSYS COMMAND [ARGS...]\n", stderr);
    return 2;
  }
  unsigned err;
  if (strcmp(argv[1], "EPERM") == 0) err = EPERM;
  else if (strcmp(argv[1], "ENOSYS") == 0) err = ENOSYS;
  else {
    fprintf(stderr, "loadgen_deny_uring: the errno must be EPERM or ENOSYS, got '%s'\n", argv[1]);
    return 2;
  }
  struct sock_filter prog[] = {
#ifdef ARCH_NOW
      // Another ABI's syscall numbers mean other syscalls: let them through.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH_NOW, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#endif
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog fprog = {.len = (unsigned short)(sizeof prog / sizeof prog[0]), .filter = prog};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0) {
    fprintf(stderr, "loadgen_deny_uring: seccomp filter refused: %s\n", strerror(errno));
    return 2;
  }
  execvp(argv[2], argv + 2);
  fprintf(stderr, "loadgen_deny_uring: exec %s: %s\n", argv[2], strerror(errno));
  return 2;
}
