// Two server builds side by side for an A/B of the load bench's light phase (bench/light_ab.ts,
// bench/matcher_light.ts): both run at once so both see the same machine in the same minutes.
// Each is started with the per-wallet rate limits out of the way, its wallets funded and its lanes
// pre-signed for every phase it will run, then warmed up by `warmup_phases` untimed light phases (JIT,
// V8's background compiles, pools, book). Rounds alternate A B, B A, so a drift of the shared machine falls on both. Every server is
// stopped once, whatever ends the run first (its end, a failure, a signal), and its data dir removed.
import type { Args } from './args.js';
import type { Generator } from './native_generator.js';
import { depositLanes } from './phases.js';
import { onSignalCleanup, removeDir, startServer, type ServerChild } from './server_child.js';
import { SIGN_BUDGET_MS, Signers } from './signers.js';

/** A per-wallet limit no phase reaches (the benches measure the path, not the limiter). */
const RATE_LIMIT_OFF = 1_000_000_000;
/** Lanes' requests signed ahead beyond the phases' count (a lane's share is rounded up, and then some). */
const SIGNED_SPARE_PER_LANE = 4;

export interface AbBuild {
  name: 'A' | 'B';
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
  name: 'A' | 'B';
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
   * `build` started, funded, signed ahead for `phases` light phases plus the warm-up, and warmed
   * up. Kept for stop() from the moment it listens, so a failure while funding still stops it.
   */
  async start(build: AbBuild, phases: number): Promise<AbServer> {
    const { rate, seconds, connections, warmup_phases } = this.light;
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
    const addresses = await signers.ready;
    await this.gen.runPhase({ port: server.port, lanes: depositLanes(addresses, connections, this.admin_token), mode: 'closed', duration_ms: Infinity });
    await signers.ensurePerLane(Math.ceil((rate * seconds * (phases + warmup_phases)) / connections) + SIGNED_SPARE_PER_LANE, SIGN_BUDGET_MS * 3);
    for (let w = 0; w < warmup_phases; w++) {
      await this.gen.runPhase({ port: server.port, lanes: signers.lanes, mode: 'open', rate, duration_ms: seconds * 1000 });
    }
    return { name: build.name, main_js: build.main_js, server, signers };
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

/** Round `round`'s order of the builds: as given on even rounds, reversed on odd (A B B A ...). */
export function abOrder<T>(ways: readonly T[], round: number): readonly T[] {
  return round % 2 === 0 ? ways : [...ways].reverse();
}
