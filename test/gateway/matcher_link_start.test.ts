// MatcherLink.start() failing after the matcher thread was created (the read model's restore or
// the event pump's wake-up throwing: RINGBOOK_LOOP_BELL=native without the module, the bell's
// open failing) must stop that thread: a fresh process of the compiled link whose start fails
// exits by itself. A leaked matcher thread sleeps on the request ring forever and keeps the
// process alive past the bound.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../server/harness.js';
import { assertDistFresh } from '../ring/ring_peer.js';

const run = promisify(execFile);
/** A healthy exit takes well under a second here; a leaked thread never exits. */
const EXIT_BOUND_MS = 15_000;

describe('MatcherLink.start() failing after the matcher thread started', () => {
  it('stops the thread and rejects with the error: the process exits on its own', async () => {
    assertDistFresh();
    const script = `
      const root = ${JSON.stringify(REPO_ROOT)};
      (async () => {
        const { MatcherLink } = await import(root + '/dist/src/gateway/matcher_link.js');
        const { loadConfig } = await import(root + '/dist/src/config/load.js');
        const { engineConfigOf } = await import(root + '/dist/src/config/read.js');
        const { readModelLimits } = await import(root + '/dist/src/read_model/read_model.js');
        const cfg = loadConfig({});
        const link = new MatcherLink({
          journal_dir: null, engine_config: engineConfigOf(cfg), request_ring_slots: cfg.limits.request_ring_slots,
          event_ring_slots: cfg.limits.event_ring_slots, batch_requests_max: cfg.limits.batch_requests_max,
          read_model: readModelLimits(cfg.limits),
          beforeEvents: () => { throw new Error('before events failed'); },
        });
        try { await link.start(); console.log('started'); } catch (e) { console.log('start failed: ' + e.message); }
      })();`;
    const r = await run(process.execPath, ['-e', script], { timeout: EXIT_BOUND_MS });
    expect(r.stdout.trim()).toBe('start failed: before events failed');
  }, EXIT_BOUND_MS + 10_000);
});
