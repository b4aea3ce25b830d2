// A second server started on a port a running one listens on does not start (uWS listened with
// SO_REUSEPORT, so it did, and the kernel split the connections between two exchanges: each
// client saw one of two states at random). Checked with two real servers.
import { afterAll, describe, expect, it } from 'vitest';
import { api, startServer, type StartedServer } from './harness.js';

describe('the API port is one server\'s alone', () => {
  const started: StartedServer[] = [];
  afterAll(async () => {
    for (const s of started) await s.stop();
  });

  it('a second server on a port in use exits 1 naming the port; the first keeps serving', async () => {
    const first = await startServer();
    started.push(first);
    const second = startServer({ env: { RINGBOOK_PORT: String(first.port) } });
    second.then((s) => started.push(s), () => undefined);
    await expect(second).rejects.toThrow(new RegExp(`server exited \\(code 1, signal null\\) before listening[\\s\\S]*cannot listen on 127\\.0\\.0\\.1:${first.port} \\(the port is in use`));
    expect((await api(first.url).get('/health')).status).toBe(200);
  }, 90_000);
});
