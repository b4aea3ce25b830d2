// A second server started on a port a running one listens on does not start (uWS listened with
// SO_REUSEPORT, so it did, and the kernel split the connections between two exchanges: each
// client saw one of two states at random). Checked with two real servers.
// Such a failed start on a data dir that was new leaves it as it was (src/journal/start_claim.ts
// StartClaim.forget): before, the journal/, da/ and snapshots/ it made stayed (with the
// directories it made), a journal no server ever served from. A data dir that held anything
// keeps all of it, the parts the start made included.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, startServer, type StartedServer } from './harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmpDir = tempDirsPerFile('ringbook-port-in-use-');

describe('the API port is one server\'s alone', () => {
  const started: StartedServer[] = [];
  afterAll(async () => {
    for (const s of started) await s.stop();
  });

  it('a second server on a port in use exits 1 naming the port; the first keeps serving; a new data dir is left as it was, a used one keeps everything', async () => {
    const first = await startServer();
    started.push(first);
    const base = tmpDir();
    const absent = path.join(base, 'made', 'data'); // its parent `made` too is the start's to make
    const used = path.join(base, 'used');
    fs.mkdirSync(used);
    fs.writeFileSync(path.join(used, 'notes.txt'), 'an operator\'s file\n');
    const failing = [absent, used].map((data_dir) => {
      const p = startServer({ env: { RINGBOOK_PORT: String(first.port), RINGBOOK_DATA_DIR: data_dir } });
      p.then((s) => started.push(s), () => undefined);
      return p;
    });
    for (const p of failing) {
      await expect(p).rejects.toThrow(new RegExp(`server exited \\(code 1, signal null\\) before listening[\\s\\S]*cannot listen on 127\\.0\\.0\\.1:${first.port} \\(the port is in use`));
    }
    expect((await api(first.url).get('/health')).status).toBe(200);
    expect(fs.readdirSync(base)).toEqual(['used']);
    // Held something: nothing removed (the secrets this start generated aside, as on any failed start).
    expect(fs.readdirSync(used).sort()).toEqual(['da', 'journal', 'notes.txt', 'snapshots']);
  }, 90_000);
});
