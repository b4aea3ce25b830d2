// The short crash soak (bench/soak.ts; the long one is `node dist/bench/soak.js --long`, 1,000
// kills): 50 SIGKILLs of the real server at random moments of a mixed signed flow, with snapshots
// every 10 batches, journal trimming and a WebSocket subscriber, each restart checked against
// the client's record of acknowledged requests (none lost, none twice, nonces, conservation per
// asset, the server's own root recheck) and `ringbook verify` agreeing on every published root
// every 10 restarts and at the end. (It replaces the first wave's 20-kill crash test.)
import { expect, it } from 'vitest';
import { runSoak, SHORT } from '../../bench/soak.js';

it(`loses nothing acknowledged and applies nothing twice across ${SHORT.kills} kill -9 restarts (seed ${SHORT.seed})`, async () => {
  const report = await runSoak(SHORT);
  expect(report.failures).toEqual([]);
  expect(report.kills).toBe(SHORT.kills);
  expect(report.acked_requests).toBeGreaterThan(SHORT.kills * 10);
  expect(report.checked_orders).toBeGreaterThan(SHORT.kills * 10);
  // Every restart that had a snapshot on disk at its kill resumed from one (with the journal after
  // it), and most had one: every other round waits before its kill for a snapshot newer than its
  // start, so this does not depend on how fast the DA thread (nice 10) catches up on a loaded
  // machine (bench/soak.ts, SNAPSHOT_WAIT_EVERY_ROUNDS). Trims happened.
  expect(report.restarts_from_snapshot, 'restarts that resumed from a snapshot').toBeGreaterThanOrEqual(report.restarts_with_snapshot);
  expect(report.restarts_with_snapshot, 'restarts with a snapshot on disk at the kill').toBeGreaterThan(SHORT.kills / 2);
  expect(report.snapshot_waits, 'rounds whose wait saw a newer snapshot').toBeGreaterThan(SHORT.kills / 4);
  expect(report.trims_seen).toBeGreaterThan(0);
  expect(report.verifier_runs).toBe(Math.ceil(SHORT.kills / SHORT.verify_every));
}, 600_000);
