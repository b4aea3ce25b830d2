// The settlement commands' exit codes, by running the real CLI: a bad config file is a config
// error (its message only, exit 1, as `ringbook replay` and the server), not a usage error (the
// message and the usage text, exit 64).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from './run_cli.js';
import { FailingEndpoint } from '../settlement/failing_endpoint.js';

const KEY = `0x${'11'.repeat(32)}`;

describe('settlement CLI: config errors', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-settlement-cli-'));
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, JSON.stringify({ server: { port: 'nope' } }));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['contract', 'deploy', '--key', KEY, '--rpc', 'http://127.0.0.1:1'],
    ['withdraw-onchain', '--key', KEY, '--asset', 'ETH', '--amount', '1', '--nonce', '1', '--rpc', 'http://127.0.0.1:1'],
    ['escape', '--key', KEY, '--url', 'http://127.0.0.1:1', '--rpc', 'http://127.0.0.1:1'],
  ])('%s: a bad --config prints the config error only and exits 1', async (...args) => {
    const r = await cli([...args, '--config', bad]);
    expect(r.stderr).toContain('config: server.port must be an integer');
    expect(r.stderr).not.toContain('usage:');
    expect(r.code).toBe(1);
  });

  it('a bad RINGBOOK_CONFIG is the same config error, as for replay', async () => {
    const settlement = await cli(['contract', 'deploy', '--key', KEY], { RINGBOOK_CONFIG: bad });
    const replay = await cli(['replay'], { RINGBOOK_CONFIG: bad });
    expect(settlement.code).toBe(replay.code);
    expect(settlement.stderr.trim()).toBe(replay.stderr.trim());
  });

  it('a bad command line is still a usage error: the message, the usage text and 64', async () => {
    const r = await cli(['contract', 'deploy', '--key', '0x12', '--rpc', 'http://127.0.0.1:1']);
    expect(r.stderr).toContain('--key must be 0x + 64 hex digits');
    expect(r.stderr).toContain('usage:');
    expect(r.code).toBe(64);
  });
});

/** A loopback port nothing listens on (bound, then closed): a connection there is refused. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe('withdraw-onchain: an unreachable server or chain is named', () => {
  // On the old code both printed 'ringbook: fetch failed' alone (exit 1), naming no URL.
  const base = ['withdraw-onchain', '--key', KEY, '--asset', 'ETH', '--amount', '1', '--nonce', '1'];

  it('the server asked for the signature (--url)', async () => {
    const server = `http://127.0.0.1:${await closedPort()}`;
    const r = await cli([...base, '--url', server, '--rpc', `http://127.0.0.1:${await closedPort()}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no server answers at ${server} (is it running? --url)`);
    expect(r.stderr).toContain('ECONNREFUSED');
  });

  it('the chain (--rpc), with --json', async () => {
    const rpc = `http://127.0.0.1:${await closedPort()}`;
    const r = await cli([...base, '--signature', `0x${'22'.repeat(65)}`, '--rpc', rpc, '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no JSON-RPC endpoint answers at ${rpc} (is it running? --rpc, config settlement.rpc_url)`);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: 'UNREACHABLE' });
  });

  it('a server whose answer is past the bound (64 KiB) is named with the bound, exit 1, not a crash', async () => {
    const server = await FailingEndpoint.start();
    try {
      server.mode = { status: 200, body: '{', content_length: 64 * 1024 + 1 };
      // Bounded (the old code waited for the rest of the body forever); the new one fails at once.
      const r = await cli([...base, '--url', server.url, '--rpc', `http://127.0.0.1:${await closedPort()}`, '--json'], {}, { timeout_ms: 20_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`the answer of ${server.url}/withdrawal-signature is longer than ${64 * 1024} bytes`);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: 'ANSWER_TOO_LARGE' });
    } finally {
      await server.close();
    }
  });
});
