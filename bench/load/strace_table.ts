// `strace -c`'s summary table as calls per syscall (bench/light_syscalls.ts): robust counts of a
// phase's syscalls, which do not depend on the machine's noise as CPU times do.

/** Calls per syscall name from `strace -c`'s table (the total row left out; lines that are not rows ignored). */
export function parseStraceTable(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (f.length < 5 || !/^\d+(\.\d+)?$/.test(f[0] ?? '')) continue;
    const name = f[f.length - 1] ?? '';
    if (name === 'total') continue;
    const calls = Number(f[3]);
    if (Number.isInteger(calls)) out[name] = calls;
  }
  return out;
}
