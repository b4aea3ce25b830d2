// A lease: a JetStream KV key with a time to live, held by one process at a time. Two uses: the
// matcher's leadership (matcher_role.ts, bucket rb_matcher_lease) and the cluster gateway that
// reads the settlement contract's events (ChainReaderLease below, bucket rb_chain_reader_lease). The bucket's max age (a stream
// max_age, in nats-server since 2.2; per-message TTLs need 2.11 and are not used) removes the
// key when its holder stops renewing; create() succeeds only while the key is absent, update()
// only at the revision the holder last wrote (compare-and-set), so at most one matcher believes
// it holds the lease after any renewal. A holder that paused past the TTL can still believe it
// for one more batch: the event stream's expected-last-sequence fence (matcher_role.ts) is what
// keeps a second writer out of the log; the lease only decides who tries.
import { Kvm, type KV } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { CHAIN_READER_BUCKET, LEASE_KEY } from './log_format.js';
import { componentLog } from '../util/log.js';

const log = componentLog('cluster');

/** Whether a JetStream error is the compare-and-set refusal (someone else wrote since). */
export function isWrongLastSequence(e: unknown): boolean {
  return e instanceof JetStreamApiError &&
    (e.code === JetStreamApiCodes.StreamWrongLastSequence || e.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

export type RenewResult = 'held' | 'lost' | 'unknown';

export class KvLease {
  private readonly kv: KV;
  private readonly holder: string;
  private revision = 0;
  held = false;

  private constructor(kv: KV, holder: string) {
    this.kv = kv;
    this.holder = holder;
  }

  /** Opens (or creates) the lease bucket `bucket`: history 1, TTL `ttl_ms`, `replicas` copies. */
  static async open(nc: NatsConnection, bucket: string, holder: string, ttl_ms: number, replicas: number): Promise<KvLease> {
    const kv = await new Kvm(nc).create(bucket, { ttl: ttl_ms, replicas, history: 1 });
    return new KvLease(kv, holder);
  }

  /** Takes the lease if nobody holds it; false when someone does (or NATS did not answer). */
  async tryAcquire(): Promise<boolean> {
    try {
      this.revision = await this.kv.create(LEASE_KEY, this.holder);
      this.held = true;
      return true;
    } catch {
      return false;
    }
  }

  /** Renews a held lease: 'lost' when someone else took it or it expired, 'unknown' when NATS did not answer. */
  async renew(): Promise<RenewResult> {
    try {
      this.revision = await this.kv.update(LEASE_KEY, this.holder, this.revision);
      return 'held';
    } catch (e) {
      if (isWrongLastSequence(e)) {
        this.held = false;
        return 'lost';
      }
      return 'unknown';
    }
  }

  /** Who holds the lease now (null: nobody). */
  async holderNow(): Promise<string | null> {
    const e = await this.kv.get(LEASE_KEY);
    if (e === null || e.operation !== 'PUT') return null;
    return e.string();
  }

  /** A clean stop hands the lease over at once instead of after its TTL. */
  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    await this.kv.delete(LEASE_KEY, { previousSeq: this.revision }).catch(() => undefined);
  }
}

/**
 * The cluster's chain reader (docs/settlement.md, "Roots in a cluster"): of the gateways with
 * `settlement.rpc_url`, only the holder of this lease reads the contract's events (deposits,
 * forced entries); the others keep serving and still read `lastBatchId`. Renewed every
 * `ttl_ms / 4` by its own timer, not by the chain link's rounds, so a slow round (many blocks of
 * logs, a slow endpoint) does not let the key expire under a live reader. A renewal NATS did not
 * answer keeps the lease believed held (as the matcher's): two readers for a moment cost only
 * refused repeats, which the engine refuses by the deposit id / envelope nonce.
 */
export class ChainReaderLease {
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  private constructor(private readonly lease: KvLease, private readonly holder: string) {}

  static async start(nc: NatsConnection, holder: string, ttl_ms: number, replicas: number): Promise<ChainReaderLease> {
    const r = new ChainReaderLease(await KvLease.open(nc, CHAIN_READER_BUCKET, holder, ttl_ms, replicas), holder);
    await r.tick();
    r.timer = setInterval(() => void r.tick(), Math.max(10, Math.floor(ttl_ms / 4)));
    return r;
  }

  /** Whether this gateway reads the chain now. */
  holding(): boolean {
    return this.lease.held;
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      if (this.lease.held) {
        if ((await this.lease.renew()) === 'lost') log.warn(`ringbook gateway ${this.holder}: chain reader lease lost: no longer reading the chain`);
      } else if (await this.lease.tryAcquire()) {
        log.info(`ringbook gateway ${this.holder}: chain reader lease taken: reading the chain`);
      }
    } finally {
      this.ticking = false;
    }
  }

  /** A clean stop hands the reading over at once. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    while (this.ticking) await new Promise((r) => setTimeout(r, 5));
    await this.lease.release();
  }
}
