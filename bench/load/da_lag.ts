// How far the DA thread's published state root trails the matcher, in batches, read from
// GET /admin/state right after a closed-loop run (bench/load.ts). With the background threads at
// a lower priority (config threads.background) the DA thread runs on what the latency path leaves,
// so under a saturating load its backlog grows; this shows by how much and how fast it drains.
import http from 'node:http';
import { ADMIN_TOKEN_HEADER } from '../../src/gateway/admin_auth.js';

function adminState(port: number, admin_token: string): Promise<{ batch_id: number; state_root_batch_id: number }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/admin/state', headers: { [ADMIN_TOKEN_HEADER]: admin_token } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        try {
          const j = (JSON.parse(text) as { data: { batch_id: string; state_root_batch_id: string | null } }).data;
          resolve({ batch_id: Number(j.batch_id), state_root_batch_id: Number(j.state_root_batch_id ?? -1) });
        } catch (e) {
          reject(new Error(`GET /admin/state: ${res.statusCode} ${text.slice(0, 200)} (${String(e)})`));
        }
      });
    }).on('error', reject);
  });
}

export interface DaLag {
  /** Batches committed but not yet covered by a published root, right after the run. */
  lag_batches: number;
  /** Milliseconds until the root caught up with that batch (polled every 10 ms, at most 10 s). */
  catch_up_ms: number;
}

const POLL_MS = 10;
const CATCH_UP_WAIT_MS = 10_000;

export async function daLag(port: number, admin_token: string): Promise<DaLag> {
  const t0 = performance.now();
  const first = await adminState(port, admin_token);
  let s = first;
  while (s.state_root_batch_id < first.batch_id && performance.now() - t0 < CATCH_UP_WAIT_MS) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    s = await adminState(port, admin_token);
  }
  return { lag_batches: first.batch_id - first.state_root_batch_id, catch_up_ms: Math.round(performance.now() - t0) };
}
