// CPU over a timed phase: the server's per thread (/proc/<pid>/task/*/stat), the generator's and
// the whole machine's, and the server threads' roles (which thread is the front, the matcher,
// the DA worker, a verify worker) to split the server's CPU per answered request by role.
import os from 'node:os';
import type { PhaseResult } from './lanes.js';
import { gcDelta, type IsolateGc } from './gc_trace.js';
import { cpuDelta, sampleMachine, sampleProc, type CpuDelta, type ServerChild } from './server_child.js';
import { f1 } from './text.js';
import { roleOfThread } from './thread_timeline.js';
import { metricsPortOf } from './metrics_cost.js';
import { verifyChecks, verifyShares, type VerifyShares } from './verify_checks.js';

export interface PhaseCpu {
  server: CpuDelta | null;
  generator: CpuDelta | null;
  /** Whole machine busy, % of one core (all processes); minus server and generator = others. */
  machine_pct: number | null;
  /** Who checked the phase's signatures (verify_checks.ts; null without a metrics listener). */
  checks: VerifyShares | null;
  /** The server's GCs per isolate over the phase (`--gc`), else null. */
  gc: Map<string, IsolateGc> | null;
}

/**
 * The generator's CPU over a phase: this process's, or what the native generator measured of
 * itself (getrusage over its connects, window and drain), spread over the same wall time.
 */
export function generatorCpu(value: PhaseResult, own: CpuDelta | null, wall_ms: number): CpuDelta | null {
  if (value.generator_cpu_ms === undefined) return own;
  return { wall_ms, cpu_ms: value.generator_cpu_ms, pct: (100 * value.generator_cpu_ms) / wall_ms, threads: [] };
}

/** Generator CPU per answered request of a phase (us), whichever generator ran it. */
export function generatorUsPerRequest(r: PhaseResult, cpu: PhaseCpu): number {
  return ((cpu.generator?.cpu_ms ?? 0) * 1000) / Math.max(1, r.in_window.responses);
}

export async function measured<T extends PhaseResult>(server: ServerChild, fn: () => Promise<T>): Promise<{ value: T; cpu: PhaseCpu }> {
  const metrics_port = metricsPortOf(server.stdout_lines);
  const c0 = await verifyChecks(metrics_port);
  const gc0 = server.gc?.snapshot() ?? null;
  const m0 = sampleMachine();
  const s0 = sampleProc(server.pid);
  const g0 = sampleProc(process.pid, false);
  const value = await fn();
  const s1 = sampleProc(server.pid);
  const g1 = sampleProc(process.pid, false);
  const m1 = sampleMachine();
  const gc = server.gc !== null && gc0 !== null ? gcDelta(gc0, server.gc.snapshot()) : null;
  const checks = verifyShares(c0, await verifyChecks(metrics_port));
  const server_cpu = cpuDelta(s0, s1);
  const machine_pct = m0 && m1 && server_cpu ? (100 * (m1.busy_ms - m0.busy_ms)) / server_cpu.wall_ms : null;
  const generator = generatorCpu(value, cpuDelta(g0, g1), server_cpu?.wall_ms ?? 1);
  return { value, cpu: { server: server_cpu, generator, machine_pct, checks, gc } };
}

/** "server 95% + generator 30% + other processes 60% of 2 cores (200%)". */
export function shareText(c: PhaseCpu): string {
  const sv = c.server?.pct ?? 0;
  const g = c.generator?.pct ?? 0;
  const others = c.machine_pct === null ? null : Math.max(0, c.machine_pct - sv - g);
  return `server ${f1(sv)}% + generator ${f1(g)}%` + (others === null ? '' : ` + other processes ${f1(others)}%`) +
    ` of ${os.availableParallelism() * 100}% (${os.availableParallelism()} cores)`;
}

/**
 * Roles of the server's threads. The main thread is tid == pid; the matcher and the DA worker name
 * themselves (src/util/thread_name.ts: `rb-matcher`, `rb-da`); the verify pool's threads (Piscina,
 * cores - 1 by default) are created last, so they are the last `verify_threads` threads still
 * called "node" (the V8 platform's and libuv's pool threads, GC helpers and LMDB commits among
 * them, were created before and stay "other"). The label says "?" unless the activity agrees:
 * verify workers are busy under signed load and idle while only unsigned deposits flow.
 */
export function inferRoles(pid: number, verify_threads: number, funding: CpuDelta | null, loaded: CpuDelta | null): Map<number, string> {
  const roles = new Map<number, string>();
  roles.set(pid, 'main (uWS front + gateway)');
  if (loaded === null) return roles;
  for (const t of loaded.threads) {
    const role = roleOfThread(pid, t.tid, t.comm);
    if (role !== 'other' && role !== 'main') roles.set(t.tid, role);
  }
  // A build that names its verify workers (rb-verify) needs no guess; an older one (an A/B through
  // --server-main) leaves them "node", and they are the last threads created.
  if ([...roles.values()].includes('verify worker')) return roles;
  const fund = new Map((funding?.threads ?? []).map((t) => [t.tid, t.pct] as const));
  // Sorted by (start, tid); only threads still called "node" (with --cpu-prof each isolate also
  // gets a "v8:ProfEvntProc" thread).
  const order = loaded.threads.filter((t) => t.tid !== pid && t.comm === 'node');
  const verify = order.slice(Math.max(0, order.length - verify_threads));
  if (verify.length === verify_threads) {
    const consistent = verify.every((t) => t.pct >= 2 && (fund.get(t.tid) ?? 0) <= Math.max(2, t.pct / 4));
    for (const t of verify) roles.set(t.tid, consistent ? 'verify worker (by creation order)' : 'verify? (creation order)');
  }
  return roles;
}

export function threadTable(label: string, d: CpuDelta | null, roles: Map<number, string>, min_pct = 1): string[] {
  if (d === null) return [`  ${label}: (no /proc sample)`];
  const lines = [`  ${label}: server ${f1(d.pct)}% of one core over ${f1(d.wall_ms / 1000)} s`];
  let rest = 0;
  for (const t of d.threads) {
    if (t.pct < min_pct && !roles.has(t.tid)) {
      rest += t.pct;
      continue;
    }
    lines.push(`    tid ${t.tid} comm=${t.comm} ${(roles.get(t.tid) ?? 'other').padEnd(28)} ${f1(t.pct).padStart(6)}%`);
  }
  if (rest > 0) lines.push(`    (other threads, each < ${min_pct}%: ${f1(rest)}% together)`);
  return lines;
}

/** µs of server CPU per answered request by thread role (rounded to 0.1). */
export function usPerRequestByRole(d: CpuDelta | null, roles: Map<number, string>, answered: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(roleCpu(d, roles))) out[k] = Math.round((v * 10000) / answered) / 10;
  return out;
}

export function roleCpu(d: CpuDelta | null, roles: Map<number, string>, what: 'cpu_ms' | 'sleeps' | 'wait_ms' = 'cpu_ms'): Record<string, number> {
  const out: Record<string, number> = {};
  if (d === null) return out;
  for (const t of d.threads) {
    const r = (roles.get(t.tid) ?? 'other').replace(/\?? \(.*$/, '');
    out[r] = (out[r] ?? 0) + t[what];
  }
  return out;
}

/**
 * Sleeps (voluntary context switches, i.e. wake-ups) per answered request by thread role, rounded
 * to 0.01: the hand-offs between threads a request costs, which CPU contention does not change
 * (issue 11: each wake-up of a sleeping thread costs the waker a futex call and the woken thread a
 * scheduling round, tens of µs on this KVM guest).
 */
export function sleepsPerRequestByRole(d: CpuDelta | null, roles: Map<number, string>, answered: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(roleCpu(d, roles, 'sleeps'))) out[k] = Math.round((v * 100) / answered) / 100;
  return out;
}

/**
 * Per thread role over a phase: % of one core running (`cpu_pct`) and % of the wall time runnable
 * but waiting for a core (`runq_wait_pct`, /proc schedstat), each rounded to 0.1. A thread that
 * waits about as long as it runs is short of CPU (the other processes', or the server's own
 * threads outnumbering the cores), not short of work.
 */
export function schedByRole(d: CpuDelta | null, roles: Map<number, string>): Record<string, { cpu_pct: number; runq_wait_pct: number }> {
  const out: Record<string, { cpu_pct: number; runq_wait_pct: number }> = {};
  if (d === null) return out;
  const cpu = roleCpu(d, roles);
  const wait = roleCpu(d, roles, 'wait_ms');
  const r1 = (x: number): number => Math.round(x * 10) / 10;
  for (const k of Object.keys(cpu)) out[k] = { cpu_pct: r1((100 * cpu[k]) / d.wall_ms), runq_wait_pct: r1((100 * (wait[k] ?? 0)) / d.wall_ms) };
  return out;
}
