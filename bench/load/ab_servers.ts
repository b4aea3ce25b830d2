// Two server builds side by side for an A/B of the load bench's light phase (bench/light_ab.ts,
// bench/matcher_light.ts): both run at once so both see the same machine in the same minutes.
// Each is started with the per-wallet rate limits out of the way, its wallets funded and its lanes
// pre-signed for every phase it will run, then warmed up by `warmup_phases` untimed light phases (JIT,
// V8's background compiles, pools, book). Every server is stopped once, whatever ends the run first
// (its end, a failure, a signal), and its data dir removed.
//
// The order of phases: startPair() + abRunOrder() (light_ab and matcher_light since h27l,
// docs/benchmarks.md "h27l"): each set-up step for both servers before the next, warm-ups
// alternated, timed phases in the Thue–Morse order, so that neither side gets the run's first
// phase after a long idle, nor more phases that follow the other server's phase, nor longer idle
// gaps (the old order, each server set up and warmed in turn and then rounds A B B A A B B A, did
// all three to A).
import type { Args } from './args.js';
import type { Generator } from './native_generator.js';
import { depositLanes } from './phases.js';
import { onSignalCleanup, removeDir, startServer, type ServerChild } from './server_child.js';
import { SIGN_BUDGET_MS, Signers } from './signers.js';
import { Rng } from '../../src/util/prng.js';

/** A per-wallet limit no phase reaches (the benches measure the path, not the limiter). */
const RATE_LIMIT_OFF = 1_000_000_000;
/** Lanes' requests signed ahead beyond the phases' count (a lane's share is rounded up, and then some). */
const SIGNED_SPARE_PER_LANE = 4;

/** A side of the A/B: which build (--server-a / --server-b), not when it runs. */
export type AbSide = 'A' | 'B';

export interface AbBuild {
  name: AbSide;
  /** The build's compiled server (dist/src/main.js). */
  main_js: string;
  /** Merged over the rate limits' section-wise (sections replaced whole), then over config/default.json. */
  config?: Record<string, unknown>;
  node_flags?: string[];
}

/** The light phase both builds run: its rate and length, over `connections` lanes. */
export interface AbLight {
  rate: number;
  seconds: number;
  connections: number;
  /** Untimed light phases before the timed ones (LightKnobs.warmup_phases). */
  warmup_phases: number;
}

export interface AbServer {
  name: AbSide;
  main_js: string;
  server: ServerChild;
  signers: Signers;
}

export class AbServers {
  private readonly servers: ServerChild[] = [];
  private readonly signers: Signers[] = [];
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly gen: Generator,
    private readonly args: Args,
    private readonly light: AbLight,
    private readonly admin_token: string,
  ) {
    onSignalCleanup(() => this.stop());
  }

  /**
   * Both builds for a symmetric run, each step done for both before the next: started (in the
   * order of `order.warmup`'s first side), signed ahead (both servers sit idle alike meanwhile:
   * an idle Node server's heap is shrunk by V8's memory reducer, docs/benchmarks.md h27l), funded
   * back to back, then warmed up alternately in `order.warmup`'s order by `warm` (default: one
   * plain light phase), which ends with the side of the run's last timed phase (abRunOrder says why).
   */
  async startPair(builds: Record<AbSide, AbBuild>, phases: number, order: AbRunOrder,
    warm: (s: AbServer) => Promise<unknown> = (s) => this.warmPhase(s)): Promise<Record<AbSide, AbServer>> {
    for (const side of ['A', 'B'] as const) {
      const n = order.warmup.filter((x) => x === side).length;
      // signAhead() signs for light.warmup_phases warm-ups a side: more would run the lanes dry.
      if (n !== this.light.warmup_phases) throw new RangeError(`startPair: ${side} has ${n} warm-ups in the order, the signing plans ${this.light.warmup_phases}`);
    }
    const launch = order.warmup[0] ?? order.timed[0];
    const one = await this.launch(builds[launch]);
    const two = await this.launch(builds[otherSide(launch)]);
    for (const s of [one, two]) await this.signAhead(s, phases);
    for (const s of [one, two]) await this.fund(s);
    const pair = launch === 'A' ? { A: one, B: two } : { A: two, B: one };
    for (const side of order.warmup) await warm(pair[side]);
    return pair;
  }

  /**
   * `build` started, its signers' keys derived; not funded. Kept for stop() from the moment it
   * listens, so a failure while funding or signing still stops it.
   */
  private async launch(build: AbBuild): Promise<AbServer> {
    const server = await startServer({
      main_js: build.main_js,
      admin_token: this.admin_token,
      config: {
        rate_limits: {
          orders_per_wallet: RATE_LIMIT_OFF, cancels_per_wallet: RATE_LIMIT_OFF, deposits_per_wallet: RATE_LIMIT_OFF,
          withdrawals_per_wallet: RATE_LIMIT_OFF, gets_per_ip: RATE_LIMIT_OFF,
        },
        ...build.config,
      },
      node_flags: build.node_flags ?? [],
    });
    this.servers.push(server);
    const signers = new Signers(this.args);
    this.signers.push(signers);
    await signers.ready;
    return { name: build.name, main_js: build.main_js, server, signers };
  }

  /** Every wallet of `s` funded (deposits, closed mode, untimed). */
  private async fund(s: AbServer): Promise<void> {
    const addresses = await s.signers.ready;
    await this.gen.runPhase({ port: s.server.port, lanes: depositLanes(addresses, this.light.connections, this.admin_token), mode: 'closed', duration_ms: Infinity });
  }

  /** `s`'s lanes signed ahead for `phases` timed phases plus the warm-up. */
  private async signAhead(s: AbServer, phases: number): Promise<void> {
    const { rate, seconds, connections, warmup_phases } = this.light;
    await s.signers.ensurePerLane(Math.ceil((rate * seconds * (phases + warmup_phases)) / connections) + SIGNED_SPARE_PER_LANE, SIGN_BUDGET_MS * 3);
  }

  /** One untimed light phase on `s`: startPair()'s default warm-up. */
  warmPhase(s: AbServer): Promise<unknown> {
    const { rate, seconds } = this.light;
    return this.gen.runPhase({ port: s.server.port, lanes: s.signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
  }

  /** Stops every server started (signers first), once: later calls get the first call's promise. */
  stop(): Promise<void> {
    return this.stopped ??= (async () => {
      for (const signers of this.signers) await signers.close();
      for (const server of this.servers) await server.stop();
    })();
  }

  /** The run's `finally`: stop (a failure to stop is not the run's error) and remove the data dirs, on success and on failure alike. */
  async dispose(): Promise<void> {
    await this.stop().catch(() => undefined);
    for (const server of this.servers) removeDir(server.dir);
  }
}

export function otherSide(side: AbSide): AbSide {
  return side === 'A' ? 'B' : 'A';
}

/** A run's phases in the order they run: the untimed warm-ups, then the timed phases. */
export interface AbRunOrder {
  warmup: AbSide[];
  timed: AbSide[];
}

/** Set bits of a non-negative integer below 2^31 (Thue–Morse: the parity of this). */
function bitsSet(i: number): number {
  let n = 0;
  for (let x = i; x !== 0; x >>>= 1) n += x & 1;
  return n;
}

/**
 * light_ab's order for `rounds` timed phases a side after `warmup_phases` warm-ups a side, the
 * timed ones starting with `first`.
 *
 * Timed: the Thue–Morse sequence (phase i is `first`'s when i has an even number of set bits:
 * A B B A B A A B B A A B ...). Warm-ups: alternated, ending with the side of the last timed phase.
 * With that pair of rules each side's timed phases have (checked for 1..40 rounds in
 * test/bench/ab_order.test.ts) the same number that directly follow its own phase (timed or
 * warm-up) and the same idle gaps before them (phases of the other server since its own last one,
 * as a multiset), and for an even number of rounds the same sum of positions (a linear drift of
 * the shared machine falls on both alike; over 8 phases a quadratic one too), given at least one
 * warm-up a side (--warmup-phases' minimum). The order before
 * (all of A's warm-ups, all of B's, then A B B A A B B A) gave A the run's first timed phase
 * after B's whole start and warm-up idle, and 3 of 4 phases right after B's against B's 2 of 4.
 */
export function abRunOrder(rounds: number, warmup_phases: number, first: AbSide): AbRunOrder {
  if (!Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(warmup_phases) || warmup_phases < 0) {
    throw new RangeError(`abRunOrder: rounds ${rounds} must be an integer >= 1, warmup_phases ${warmup_phases} an integer >= 0`);
  }
  const second = otherSide(first);
  const timed = Array.from({ length: 2 * rounds }, (_, i) => (bitsSet(i) % 2 === 0 ? first : second));
  const last = timed[timed.length - 1];
  const warmup: AbSide[] = [];
  for (let k = 0; k < warmup_phases; k++) warmup.push(otherSide(last), last);
  return { warmup, timed };
}

/** The side whose timed phase comes first (abRunOrder's `first`), drawn from a run's order seed. */
export function abFirstSide(order_seed: number): AbSide {
  return new Rng(order_seed).float() < 0.5 ? 'A' : 'B';
}
