// The load bench's signing pool: worker threads (bench/load/signer_worker.ts) that derive the
// wallets' keys and pre-sign rounds of requests into each lane between the timed phases.
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import type { Args } from './args.js';
import { DEFAULT_MIX, laneWallets } from './flow.js';
import { Lane, type Segment } from './lanes.js';
import type { SignReply, SignerInit, SignerReady } from './signer_worker.js';

/** Most wall time one pre-signing top-up may take (keeps the whole bench near 2 minutes). */
export const SIGN_BUDGET_MS = 10_000;

export class Signers {
  private readonly workers: Worker[] = [];
  private readonly stop = new SharedArrayBuffer(4);
  private busy: Promise<unknown> = Promise.resolve();
  /** Resolves with every wallet's address once each worker derived its keys. */
  readonly ready: Promise<string[]>;
  readonly lanes: Lane[];
  private readonly lane_wallets: number[];
  signed = 0;
  sign_wall_ms = 0;

  constructor(args: Args) {
    this.lanes = Array.from({ length: args.connections }, (_, i) => new Lane(i));
    this.lane_wallets = this.lanes.map((l) => laneWallets(l.id, args.connections, args.wallets).length);
    const file = new URL('./signer_worker.js', import.meta.url);
    const readies: Promise<SignerReady>[] = [];
    for (let k = 0; k < args.signers; k++) {
      const lanes = this.lanes.filter((l) => l.id % args.signers === k).map((l) => l.id);
      if (lanes.length === 0) continue;
      const init: SignerInit = { stop: this.stop, seed: args.seed, lanes, lane_count: args.connections, wallets: args.wallets, mix: DEFAULT_MIX };
      const w = new Worker(file, { workerData: init });
      w.unref();
      this.workers.push(w);
      readies.push(Signers.reply<SignerReady>(w));
    }
    this.ready = Promise.all(readies).then((rs) => {
      const addresses: string[] = new Array(args.wallets);
      for (const r of rs) for (const x of r.wallets) addresses[x.index] = x.address;
      for (let i = 0; i < args.wallets; i++) if (addresses[i] === undefined) throw new Error(`no signer owns wallet ${i}`);
      return addresses;
    });
  }

  private static reply<T>(w: Worker, msg?: unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onMsg = (m: T): void => {
        w.off('error', onErr);
        resolve(m);
      };
      const onErr = (e: Error): void => {
        w.off('message', onMsg);
        reject(e);
      };
      w.once('message', onMsg);
      w.once('error', onErr);
      if (msg !== undefined) w.postMessage(msg);
    });
  }

  /** Requests signed per wall second so far (0 before the first chunk). */
  rate(): number {
    return this.sign_wall_ms > 0 ? (this.signed * 1000) / this.sign_wall_ms : 0;
  }

  remaining(): number {
    return this.lanes.reduce((s, l) => s + l.remaining, 0);
  }

  /** Whole rounds (one request per wallet) still needed for every lane to hold `per_lane` requests. */
  private roundsShort(per_lane: number): number {
    let rounds = 0;
    this.lanes.forEach((l, i) => {
      const short = per_lane - l.remaining;
      if (short > 0) rounds = Math.max(rounds, Math.ceil(short / this.lane_wallets[i]));
    });
    return rounds;
  }

  /**
   * Signs rounds until every lane holds at least `per_lane` requests or `budget_ms` of signing
   * passed (chunks of ~2 s, so the budget holds on a slow or busy machine). Returns how many
   * requests were signed.
   */
  async ensurePerLane(per_lane: number, budget_ms: number): Promise<number> {
    const t0 = performance.now();
    const wallets = this.lane_wallets.reduce((a, b) => a + b, 0);
    let n = 0;
    for (;;) {
      const short = this.roundsShort(per_lane);
      const left_ms = budget_ms - (performance.now() - t0);
      if (short === 0 || left_ms <= 0) break;
      const rate = this.rate();
      const chunk = rate > 0 ? Math.max(1, Math.floor((rate * Math.min(2000, left_ms)) / 1000 / wallets)) : 1;
      n += await this.signRounds(Math.min(chunk, short));
    }
    return n;
  }

  private async signRounds(rounds: number): Promise<number> {
    const t0 = performance.now();
    const all = Promise.all(this.workers.map((w) => Signers.reply<SignReply>(w, { rounds })));
    this.busy = all.catch(() => undefined);
    const replies = await all;
    let n = 0;
    for (const r of replies) {
      for (const c of r.chunks) {
        const seg: Segment = { buf: Buffer.from(c.buf), offsets: c.offsets, kinds: c.kinds };
        this.lanes[c.lane].add(seg);
      }
      n += r.signed;
    }
    this.signed += n;
    this.sign_wall_ms += performance.now() - t0;
    return n;
  }

  /** Stops a running chunk, waits for the workers to leave native code, then ends them. */
  async close(): Promise<void> {
    Atomics.store(new Int32Array(this.stop), 0, 1);
    await Promise.race([this.busy, new Promise((r) => setTimeout(r, 1500).unref())]);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
