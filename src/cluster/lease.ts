// Matcher leadership: a JetStream KV key with a time to live. The bucket's max age (a stream
// max_age, in nats-server since 2.2; per-message TTLs need 2.11 and are not used) removes the
// key when its holder stops renewing; create() succeeds only while the key is absent, update()
// only at the revision the holder last wrote (compare-and-set), so at most one matcher believes
// it holds the lease after any renewal. A holder that paused past the TTL can still believe it
// for one more batch: the event stream's expected-last-sequence fence (matcher_role.ts) is what
// keeps a second writer out of the log; the lease only decides who tries.
import { Kvm, type KV } from '@nats-io/kv';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { LEASE_BUCKET, LEASE_KEY } from './log_format.js';

/** Whether a JetStream error is the compare-and-set refusal (someone else wrote since). */
export function isWrongLastSequence(e: unknown): boolean {
  return e instanceof JetStreamApiError &&
    (e.code === JetStreamApiCodes.StreamWrongLastSequence || e.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

export type RenewResult = 'held' | 'lost' | 'unknown';

export class MatcherLease {
  private readonly kv: KV;
  private readonly holder: string;
  private revision = 0;
  held = false;

  private constructor(kv: KV, holder: string) {
    this.kv = kv;
    this.holder = holder;
  }

  /** Opens (or creates) the lease bucket: history 1, TTL `ttl_ms`, `replicas` copies. */
  static async open(nc: NatsConnection, holder: string, ttl_ms: number, replicas: number): Promise<MatcherLease> {
    const kv = await new Kvm(nc).create(LEASE_BUCKET, { ttl: ttl_ms, replicas, history: 1 });
    return new MatcherLease(kv, holder);
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
