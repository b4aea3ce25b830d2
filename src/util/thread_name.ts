// Names the calling thread in /proc (Linux `comm`, at most 15 bytes), so `top -H`, `ps -L` and the
// load bench tell the server's threads apart: Node 20 leaves every thread of the process "node",
// and the bench used to guess roles from creation order (which got the matcher wrong once the DA
// worker and Piscina's threads came in between). `writeFileSync` runs on the calling thread, and
// /proc/thread-self is that thread's entry. Elsewhere (no /proc) it does nothing.
import { writeFileSync } from 'node:fs';

/** Thread names the server sets (the bench reads them back). */
export const THREAD_NAMES = { matcher: 'rb-matcher', da: 'rb-da' } as const;

export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or /proc not mounted: the name is only a diagnostic
  }
}
