// Names the calling thread in /proc (Linux `comm`, at most 15 bytes), so `top -H`, `ps -L` and the
// load bench tell the server's threads apart: Node 20 leaves every thread of the process "node",
// and the bench used to guess roles from creation order (which got the matcher wrong once the DA
// worker and Piscina's threads came in between). `writeFileSync` runs on the calling thread, and
// /proc/thread-self is that thread's entry. Elsewhere (no /proc) it does nothing.
import { execFileSync } from 'node:child_process';
import { readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Thread names the server sets (the bench reads them back). */
export const THREAD_NAMES = { matcher: 'rb-matcher', da: 'rb-da', snapshot_writer: 'rb-snapshot', verify: 'rb-verify' } as const;

export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or /proc not mounted: the name is only a diagnostic
  }
}

/** This thread's kernel thread id (Linux), from the /proc/thread-self link ("<pid>/task/<tid>"). */
export function currentThreadId(): number | null {
  try {
    const tid = Number(path.basename(readlinkSync('/proc/thread-self')));
    return Number.isSafeInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * Runs a util-linux thread tool (`taskset`, `chrt`) on one thread; null on success, else why it
 * failed in one line (a missing tool named as such). Never throws.
 */
export function runThreadTool(tool: 'taskset' | 'chrt', args: readonly string[]): string | null {
  try {
    execFileSync(tool, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000 });
    return null;
  } catch (e) {
    const err = e as { code?: string; stderr?: Buffer };
    return err.code === 'ENOENT' ? `${tool} (util-linux) is not installed` : (err.stderr?.toString().trim() || String(e)).slice(0, 200);
  }
}
