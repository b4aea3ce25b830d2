// bench/light_syscalls.ts's phases, as a plan its loop walks: the shared symmetric order of
// light_ab and matcher_light (ab_servers.ts abRunOrder: set-up interleaved, warm-ups alternated,
// timed turns in the Thue–Morse order, the first side drawn from --order-seed; docs/benchmarks.md
// "h27l"). Until h28s light_syscalls set up and warmed each server in turn and then ran its own
// rounds A B, B A, ...: the order h27l showed favours A.
import { abFirstSide, abRunOrder, type AbRunOrder, type AbSide } from './ab_servers.js';

/** What one timed turn of a side runs, in this order, each a light phase of the same length and rate. */
export const SYSCALLS_TURN_PHASES = ['plain', 'front_strace', 'server_strace'] as const;
export type SyscallsPhase = (typeof SYSCALLS_TURN_PHASES)[number];

export interface SyscallsTurn {
  side: AbSide;
  /** The side's own turn count before this one (0: its first). */
  own: number;
  /** --trace-file: this turn's front phase is traced call by call into the file (B's first turn), not counted. */
  trace_front_to_file: boolean;
}

export interface SyscallsPlan {
  /** The shared order: its warm-ups (one plain light phase each) and one timed entry per turn. */
  order: AbRunOrder;
  turns: SyscallsTurn[];
  /** Light phases a side runs timed (its turns' phases), for signing ahead: AbServers.startPair's `phases`. */
  timed_phases_per_side: number;
}

export function syscallsPlan(rounds: number, warmup_phases: number, order_seed: number, trace_file: boolean): SyscallsPlan {
  const order = abRunOrder(rounds, warmup_phases, abFirstSide(order_seed));
  const seen: Record<AbSide, number> = { A: 0, B: 0 };
  const turns = order.timed.map((side) => {
    const own = seen[side]++;
    return { side, own, trace_front_to_file: trace_file && side === 'B' && own === 0 };
  });
  return { order, turns, timed_phases_per_side: rounds * SYSCALLS_TURN_PHASES.length };
}
