// The load bench's untimed funding phase and its two latency phases (issue 11): a light fixed
// rate, then half the max rate.
import { FRONT_EVENTS, startPerfStat } from './perf_stat.js';
import type { Args } from './args.js';
import { DEPOSIT_ETH, DEPOSIT_USDC, KIND_DEPOSIT, depositRequest } from './flow.js';
import { Lane, textSegment, type PhaseResult } from './lanes.js';
import type { Generator } from './native_generator.js';
import { measured, type PhaseCpu } from './phase_cpu.js';
import { clockTicks, type ServerChild } from './server_child.js';
import { SIGN_BUDGET_MS, type Signers } from './signers.js';
import { LEAD_IN_MS } from './stalls.js';
import { LIGHT_RATE_PER_S } from './targets.js';
import { saneOrThrow } from './text.js';
import { sampledAround, type Timeline } from './thread_timeline.js';

export function depositLanes(addresses: string[], connections: number, admin_token: string): Lane[] {
  const lanes = Array.from({ length: connections }, (_, i) => new Lane(i));
  const per: string[][] = lanes.map(() => []);
  addresses.forEach((a, i) => {
    per[i % connections].push(depositRequest(a, 'USDC', DEPOSIT_USDC, admin_token));
    per[i % connections].push(depositRequest(a, 'ETH', DEPOSIT_ETH, admin_token));
  });
  lanes.forEach((l, i) => l.add(textSegment(per[i], new Uint8Array(per[i].length).fill(KIND_DEPOSIT))));
  return lanes;
}

export interface LatencyPhases {
  light: PhaseResult;
  light_cpu: PhaseCpu;
  /** The light phase's window in epoch ms (the server's stage rows are picked by arrival in it). */
  light_from_ms: number;
  light_to_ms: number;
  half: PhaseResult;
  half_cpu: PhaseCpu;
  half_rate: number;
  /** The half-max phase's window in epoch ms (its stage rows: where its p99 comes from). */
  half_from_ms: number;
  half_to_ms: number;
  /** Each server thread's running and run-queue-wait time sampled through the phase (thread_timeline.ts); null without /proc. */
  light_timeline: Timeline | null;
  half_timeline: Timeline | null;
  /** --perf-stat: the front thread's kernel events over the half-max phase, else null. */
  half_front_events: Map<string, number> | null;
}

/**
 * Runs `fn` with the server's threads sampled around it from LEAD_IN_MS before (an episode in
 * the phase's first 100 ms has its lead-in sampled too).
 */
function sampled<T>(pid: number, fn: () => Promise<T>): Promise<{ value: T; timeline: Timeline | null; from_ms: number; to_ms: number }> {
  return sampledAround(pid, LEAD_IN_MS, fn, { clk_tck: clockTicks() });
}

export async function latencyPhases(gen: Generator, server: ServerChild, signers: Signers, args: Args, max_requests_per_s: number): Promise<LatencyPhases> {
  const port = server.port;
  const C = args.connections;
  const half_rate = Math.max(1, max_requests_per_s / 2);
  await signers.ensurePerLane(Math.ceil(((LIGHT_RATE_PER_S + half_rate) * args.seconds) / C) + 2, SIGN_BUDGET_MS);
  // Progress on stderr (the report comes at the end): lets a tool attached to the server (perf,
  // strace) find the light phase.
  console.error(`load: ${LIGHT_RATE_PER_S}/s phase starts (${args.seconds} s)`);
  const { value: m, timeline: light_timeline, from_ms: light_from_ms, to_ms: light_to_ms } = await sampled(server.pid, () => measured(server, () => gen.runPhase({ port, lanes: signers.lanes, mode: 'open', rate: LIGHT_RATE_PER_S, duration_ms: args.seconds * 1000, records: true })));
  const light = m.value;
  saneOrThrow(`${LIGHT_RATE_PER_S}/s phase`, light);
  console.error(`load: half-max phase starts (${Math.round(half_rate)}/s, ${args.seconds} s)`);
  const counting = args.perf_stat ? startPerfStat(server.pid, FRONT_EVENTS) : null;
  const { value: h, timeline: half_timeline, from_ms: half_from_ms, to_ms: half_to_ms } = await sampled(server.pid, () => measured(server, () => gen.runPhase({ port, lanes: signers.lanes, mode: 'open', rate: half_rate, duration_ms: args.seconds * 1000, records: true })));
  const half_front_events = counting === null ? null : await counting.stop();
  const half = h.value;
  saneOrThrow('half-max-rate phase', half);
  return { light, light_cpu: m.cpu, light_from_ms, light_to_ms, half, half_cpu: h.cpu, half_rate, half_from_ms, half_to_ms, light_timeline, half_timeline, half_front_events };
}
