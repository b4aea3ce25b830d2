// The leader's status message (src/cluster/matcher_status.ts): what a gateway reads back of what a
// leader wrote, versions it does not know ignored, a malformed version 1 refused.
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { leaderStatusHeaders, MATCHER_STATUS_VERSION, readLeaderStatus } from '../../src/cluster/matcher_status.js';
import { clusterSettings } from '../../src/cluster/roles.js';

describe('the leader status message', () => {
  it('round-trips a status without and with a store fault (one-line error, at most 300 characters)', () => {
    expect(readLeaderStatus(leaderStatusHeaders({ leader: 'm1', batch_id: 41, store_fault: null })))
      .toEqual({ leader: 'm1', batch_id: 41, store_fault: null });
    expect(readLeaderStatus(leaderStatusHeaders({ leader: 'm1', batch_id: -1, store_fault: null }))?.batch_id).toBe(-1);
    const long = `insufficient resources\r\nline two ${'x'.repeat(400)}`;
    const back = readLeaderStatus(leaderStatusHeaders({ leader: 'm2', batch_id: 7, store_fault: { batch_id: 8, message: long } }));
    expect(back?.store_fault?.batch_id).toBe(8);
    expect(back?.store_fault?.message.startsWith('insufficient resources line two x')).toBe(true);
    expect(back?.store_fault?.message.length).toBe(300);
  });

  it('ignores another version and messages without headers; refuses a malformed version 1', () => {
    const hd = leaderStatusHeaders({ leader: 'm1', batch_id: 3, store_fault: null });
    hd.set('Rb-Status-Version', String(MATCHER_STATUS_VERSION + 1));
    expect(readLeaderStatus(hd)).toBeNull();
    expect(readLeaderStatus(undefined)).toBeNull();
    const bad = headers();
    bad.set('Rb-Status-Version', '1');
    bad.set('Rb-Batch', 'x');
    expect(() => readLeaderStatus(bad)).toThrow(/Rb-Batch/);
    const bad_fault = leaderStatusHeaders({ leader: 'm1', batch_id: 3, store_fault: null });
    bad_fault.set('Rb-Store-Fault-Batch', '-2');
    expect(() => readLeaderStatus(bad_fault)).toThrow(/Rb-Store-Fault-Batch/);
    // Hostile sizes: a batch id past 2^53 (read back as another batch) and a minus below -1.
    bad.set('Rb-Batch', '9'.repeat(30));
    expect(() => readLeaderStatus(bad)).toThrow(/Rb-Batch/);
    bad.set('Rb-Batch', '-2');
    expect(() => readLeaderStatus(bad)).toThrow(/Rb-Batch/);
    bad_fault.set('Rb-Store-Fault-Batch', '9007199254740993');
    expect(() => readLeaderStatus(bad_fault)).toThrow(/Rb-Store-Fault-Batch/);
    // An error text longer than a writer sends is cut to the same bound.
    const long_error = leaderStatusHeaders({ leader: 'm1', batch_id: 3, store_fault: { batch_id: 4, message: 'e' } });
    long_error.set('Rb-Store-Fault-Error', 'x'.repeat(10_000));
    expect(readLeaderStatus(long_error)?.store_fault?.message.length).toBe(300);
  });

  it('RINGBOOK_STORE_FAULT_AFTER_MS: default 10 s, 0..600,000 ms, anything else refused at the start', () => {
    const env = (v: string | undefined): NodeJS.ProcessEnv => ({ RINGBOOK_NATS_URLS: 'nats://127.0.0.1:4222', RINGBOOK_STORE_FAULT_AFTER_MS: v });
    expect(clusterSettings('matcher', env(undefined)).store_fault_after_ms).toBe(10_000);
    expect(clusterSettings('matcher', env('0')).store_fault_after_ms).toBe(0);
    expect(clusterSettings('matcher', env('600000')).store_fault_after_ms).toBe(600_000);
    for (const bad of ['-1', '600001', '1e4', 'ten', '100.5']) {
      expect(() => clusterSettings('matcher', env(bad)), bad).toThrow(/RINGBOOK_STORE_FAULT_AFTER_MS/);
    }
  });

  for (const [role, name, key] of [
    ['matcher', 'RINGBOOK_MATCHER_SNAPSHOT_EVERY_BATCHES', 'matcher_snapshot_every_batches'],
    ['gateway', 'RINGBOOK_GATEWAY_SNAPSHOT_EVERY_BATCHES', 'gateway_snapshot_every_batches'],
  ] as const) {
    it(`${name}: absent or empty is the config's, 0 none, a whole number; anything else refused at the start`, () => {
      const env = (v: string | undefined): NodeJS.ProcessEnv => ({ RINGBOOK_NATS_URLS: 'nats://127.0.0.1:4222', [name]: v });
      expect(clusterSettings(role, env(undefined))[key]).toBeNull();
      expect(clusterSettings(role, env(''))[key]).toBeNull();
      expect(clusterSettings(role, env('0'))[key]).toBe(0);
      expect(clusterSettings(role, env('1000'))[key]).toBe(1000);
      for (const bad of ['-1', '1e3', 'ten', '100.5', ' 5', '99999999999999999999']) {
        expect(() => clusterSettings(role, env(bad)), bad).toThrow(new RegExp(name));
      }
    });
  }
});
