// Stopping a child process the same way everywhere (the local NATS cluster's nodes, the benches'
// server children): a signal, then SIGKILL if it has not exited within a bound, and the exit
// awaited (a stop that returns before the exit would leave ports and files in use).
import type { ChildProcess } from 'node:child_process';

/** Sends `signal` and resolves once the child exited; SIGKILL after `kill_after_ms`. At once when already gone. */
export async function stopChild(proc: ChildProcess, signal: NodeJS.Signals, kill_after_ms: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill(signal);
  const timer = signal === 'SIGKILL' ? null : setTimeout(() => proc.kill('SIGKILL'), kill_after_ms);
  await exited;
  if (timer !== null) clearTimeout(timer);
}
