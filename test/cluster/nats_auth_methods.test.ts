// The other NATS credential methods of the cluster roles (src/cluster/nats_auth.ts): what the
// environment may hold and what is refused before any connection, that no description of the
// settings carries a secret, and a token and an NKey accepted by a real nats-server (one node; the
// NKey user a matcher role that leads from genesis). User/password under the documented sample
// permissions: nats_auth.test.ts.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { nkeys } from '@nats-io/transport-node';
import { ConfigError } from '../../src/config/checks.js';
import { LocalNatsCluster } from '../../src/cluster/local_nats.js';
import { connectCluster, natsConnectionOptions, NatsCredentials } from '../../src/cluster/nats_auth.js';
import { clusterSettings } from '../../src/cluster/roles.js';
import { ComponentLog } from '../../src/util/log.js';
import { REPO_ROOT, startServer } from '../server/harness.js';
import { leadingFromGenesis } from './cluster_helpers.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-nats-auth-'));
const clusters: LocalNatsCluster[] = [];
afterAll(async () => {
  for (const c of clusters.splice(0)) await c.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function writeFile(name: string, text: string | Uint8Array): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/** A user NKey: its seed in a file (as `nk -gen user -pubout` writes it) and its public key. */
function userNkey(name: string): { file: string; public_key: string; seed: string } {
  const kp = nkeys.createUser();
  const seed = new TextDecoder().decode(kp.getSeed());
  return { file: writeFile(name, seed + '\n'), public_key: kp.getPublicKey(), seed };
}

const URLS = { RINGBOOK_NATS_URLS: 'nats://127.0.0.1:4222' };

describe('NATS credentials from the environment', () => {
  it('reads one method, refuses two, half a pair, unreadable or malformed files', () => {
    expect(NatsCredentials.fromEnv({}).describe()).toBe('no credentials');
    expect(NatsCredentials.fromEnv({ RINGBOOK_NATS_USER: 'gateway', RINGBOOK_NATS_PASSWORD: 'pw' }).connectOptions()).toEqual({ user: 'gateway', pass: 'pw' });
    expect(NatsCredentials.fromEnv({ RINGBOOK_NATS_TOKEN: 'tok' }).connectOptions()).toEqual({ token: 'tok' });
    const key = userNkey('seed-ok');
    const nk = NatsCredentials.fromEnv({ RINGBOOK_NATS_NKEY_SEED_FILE: key.file });
    expect(nk.describe()).toBe(`NKey ${key.public_key} (${key.file})`);
    expect(typeof nk.connectOptions().authenticator).toBe('function');

    const refused = (env: NodeJS.ProcessEnv, why: RegExp): void => {
      expect(() => NatsCredentials.fromEnv(env)).toThrow(ConfigError);
      expect(() => NatsCredentials.fromEnv(env)).toThrow(why);
    };
    refused({ RINGBOOK_NATS_USER: 'u', RINGBOOK_NATS_PASSWORD: 'p', RINGBOOK_NATS_TOKEN: 't' }, /give one method only, not RINGBOOK_NATS_USER\/RINGBOOK_NATS_PASSWORD and RINGBOOK_NATS_TOKEN/);
    refused({ RINGBOOK_NATS_TOKEN: 't', RINGBOOK_NATS_NKEY_SEED_FILE: key.file }, /give one method only/);
    refused({ RINGBOOK_NATS_USER: 'u' }, /RINGBOOK_NATS_USER needs RINGBOOK_NATS_PASSWORD/);
    refused({ RINGBOOK_NATS_PASSWORD: 'p' }, /RINGBOOK_NATS_PASSWORD needs RINGBOOK_NATS_USER/);
    refused({ RINGBOOK_NATS_NKEY_SEED_FILE: path.join(dir, 'missing') }, /RINGBOOK_NATS_NKEY_SEED_FILE: cannot read .*missing: ENOENT/);
    refused({ RINGBOOK_NATS_NKEY_SEED_FILE: dir }, /cannot read .*: EISDIR/);
    refused({ RINGBOOK_NATS_NKEY_SEED_FILE: writeFile('empty', '') }, /holds 0 bytes, not a NATS credential/);
    refused({ RINGBOOK_NATS_NKEY_SEED_FILE: writeFile('not-seed', 'SUAnotaseed\n') }, /does not hold an NKey seed/);
    const account = new TextDecoder().decode(nkeys.createAccount().getSeed());
    refused({ RINGBOOK_NATS_NKEY_SEED_FILE: writeFile('account-seed', account) }, /not a user key/);
    refused({ RINGBOOK_NATS_CREDS_FILE: writeFile('not-creds', 'hello') }, /RINGBOOK_NATS_CREDS_FILE: .* is not a NATS creds file/);
    // The same refusals stop a role's settings, and credentials in a URL are refused (the URLs are logged).
    expect(() => clusterSettings('gateway', { ...URLS, RINGBOOK_NATS_TOKEN: 't', RINGBOOK_NATS_USER: 'u', RINGBOOK_NATS_PASSWORD: 'p' })).toThrow(/one method only/);
    expect(() => clusterSettings('gateway', { RINGBOOK_NATS_URLS: 'nats://u:p@127.0.0.1:4222' })).toThrow(/no credentials in the URLs/);
    expect(() => clusterSettings('gateway', { RINGBOOK_NATS_URLS: 'nats://tok@127.0.0.1:4222' })).toThrow(/no credentials in the URLs/);
  });

  it('no description or serialisation of the settings carries a secret', () => {
    const key = userNkey('seed-secret');
    for (const [env, secret] of [
      [{ RINGBOOK_NATS_USER: 'gateway', RINGBOOK_NATS_PASSWORD: 'pw-very-secret' }, 'pw-very-secret'],
      [{ RINGBOOK_NATS_TOKEN: 'token-very-secret' }, 'token-very-secret'],
      [{ RINGBOOK_NATS_NKEY_SEED_FILE: key.file }, key.seed],
    ] as const) {
      const s = clusterSettings('matcher', { ...URLS, ...env });
      const shown = [JSON.stringify(s), s.nats_credentials.describe(), String(s.nats_credentials), JSON.stringify({ ...s })];
      for (const text of shown) expect(text).not.toContain(secret);
      expect(natsConnectionOptions(s.nats_urls, s.nats_credentials, 'x')).toMatchObject({ servers: s.nats_urls, name: 'x', maxReconnectAttempts: -1 });
    }
  });
});

/** A loopback listener that accepts and never writes (as a monitoring port or a hung server): its URL, its accepted sockets. */
async function silentListener(): Promise<{ url: string; accepted: net.Socket[]; close: () => void }> {
  const accepted: net.Socket[] = [];
  const server = net.createServer((s) => {
    accepted.push(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `nats://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return { url, accepted, close: () => { for (const s of accepted) s.destroy(); server.close(); } };
}

/** Short waits so the test stays cheap (the roles' are NATS_DIAL_TIMEOUT_MS and INFO_PROBE_MS_MAX). */
const SHORT_WAITS = { dial_timeout_ms: 300, info_wait_ms: 300 };

describe('a NATS URL that accepts TCP but never speaks', () => {
  it('the start gives it up after the dial timeout and names it ("no NATS INFO"), also beside a refused URL', async () => {
    // On the old code: nats.js's 20 s per URL, then a bare "timeout" (this test's bound is less).
    const silent = await silentListener();
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const refused = `nats://127.0.0.1:${(closed.address() as net.AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    try {
      const said = `${silent.url} accepted the connection but sent no NATS INFO within 300 ms`;
      const alone = await connectCluster([silent.url], NatsCredentials.none(), 'test-silent', SHORT_WAITS).then(() => null, (e: unknown) => e);
      expect(alone).toBeInstanceOf(ConfigError);
      expect((alone as Error).message).toContain(said);
      expect((alone as Error).message).toContain('each URL is given up after 300 ms');
      expect(silent.accepted.length).toBeGreaterThan(0);
      // Whichever URL nats.js tried last, the silent one is named and the refused one is not.
      const beside = await connectCluster([silent.url, refused], NatsCredentials.none(), 'test-silent', SHORT_WAITS).then(() => null, (e: unknown) => e);
      expect(beside).toBeInstanceOf(ConfigError);
      expect((beside as Error).message).toContain(said);
      expect((beside as Error).message).not.toContain(`${refused} accepted`);
    } finally {
      silent.close();
    }
  }, 15_000);
});

describe('the documented sample', () => {
  it('docs/scale-out.md shows the sample file\'s own text (the file the permission tests run)', () => {
    const docs = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'scale-out.md'), 'utf8');
    const section = docs.slice(docs.indexOf('## NATS authentication and permissions'));
    const shown = /\n```\n([\s\S]*?)\n```\n/.exec(section)?.[1];
    expect(shown).toMatch(/user: gateway/);
    expect(fs.readFileSync(path.join(REPO_ROOT, 'config', 'nats-authorization.conf'), 'utf8')).toContain(shown);
  });
});

describe('NATS credentials against nats-server', () => {
  it('a token: accepted when right, refused when wrong', async () => {
    // A letter first: nats-server parses a variable's value as a config value (a hex string
    // starting "1e5..." is a number to it, and its start fails; docs/scale-out.md).
    const token = 'tok-' + randomBytes(16).toString('hex');
    const nats = await LocalNatsCluster.start(1, 'nats-server', {
      authorization: 'authorization { token: $RB_TEST_TOKEN }', env: { RB_TEST_TOKEN: token }, client: { token },
    });
    clusters.push(nats);
    const nc = await connectCluster(nats.urls(), NatsCredentials.fromEnv({ RINGBOOK_NATS_TOKEN: token }), 'test-token');
    await nc.flush();
    await nc.close();
    // A silent URL beside a working one: given up after the dial timeout (if tried first), the start goes on.
    const silent = await silentListener();
    try {
      const beside = await connectCluster([silent.url, ...nats.urls()], NatsCredentials.fromEnv({ RINGBOOK_NATS_TOKEN: token }), 'test-token', SHORT_WAITS);
      await beside.flush();
      await beside.close();
    } finally {
      silent.close();
    }
    await expect(connectCluster(nats.urls(), NatsCredentials.fromEnv({ RINGBOOK_NATS_TOKEN: 'x' + token }), 'test-token'))
      .rejects.toThrow(/refused the connection with a token: Authorization Violation/);

    // A node refusing the role beside one accepting it: the start goes on with a warning naming the
    // refusing URL, whichever nats.js would have tried first. On the old code (one try over the
    // list, nats.js's order random) the start failed when the refusing node came first, and no
    // warning was logged when it did not.
    const other_token = 'tok-' + randomBytes(16).toString('hex');
    const other = await LocalNatsCluster.start(1, 'nats-server', {
      authorization: 'authorization { token: $RB_TEST_TOKEN }', env: { RB_TEST_TOKEN: other_token }, client: { token: other_token },
    });
    clusters.push(other);
    const refusing = other.urls()[0];
    const warn = vi.spyOn(ComponentLog.prototype, 'warn');
    try {
      for (const urls of [[refusing, ...nats.urls()], [...nats.urls(), refusing]]) {
        warn.mockClear();
        const nc = await connectCluster(urls, NatsCredentials.fromEnv({ RINGBOOK_NATS_TOKEN: token }), 'test-token');
        await nc.flush();
        expect(nc.getServer()).toBe(nats.urls()[0].replace(/^nats:\/\//, ''));
        await nc.close();
        const lines = warn.mock.calls.map((c) => c[0]);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`NATS URL ${refusing} left out`);
        expect(lines[0]).toContain(`NATS (${refusing}) refused the connection with a token: Authorization Violation`);
      }
    } finally {
      warn.mockRestore();
    }
    // Every node refusing: the start fails as before, at once, naming them all.
    await expect(connectCluster([refusing, ...nats.urls()], NatsCredentials.fromEnv({ RINGBOOK_NATS_TOKEN: 'x' + token }), 'test-token'))
      .rejects.toThrow(`NATS (${[refusing, ...nats.urls()].join(',')}) refused the connection with a token: Authorization Violation`);
  }, 30_000);

  it('an NKey: a matcher role with RINGBOOK_NATS_NKEY_SEED_FILE leads; without it, it exits saying why', async () => {
    const key = userNkey('seed-matcher');
    const admin = userNkey('seed-admin');
    const nats = await LocalNatsCluster.start(1, 'nats-server', {
      authorization: `authorization { users = [ { nkey: ${key.public_key} }, { nkey: ${admin.public_key} } ] }`, env: {},
      client: { authenticator: NatsCredentials.fromEnv({ RINGBOOK_NATS_NKEY_SEED_FILE: admin.file }).connectOptions().authenticator },
    });
    clusters.push(nats);
    const env = { RINGBOOK_NATS_URLS: nats.urls().join(','), RINGBOOK_ROLE: 'matcher', RINGBOOK_NODE_ID: 'm-nkey', RINGBOOK_CLUSTER_REPLICAS: '1' };
    const m = await startServer({ env: { ...env, RINGBOOK_NATS_NKEY_SEED_FILE: key.file } });
    try {
      await leadingFromGenesis(m);
      const out = m.output();
      expect(out.stdout + out.stderr).not.toContain(key.seed);
    } finally {
      await m.stop('SIGKILL');
    }
    await expect(startServer({ env })).rejects.toThrow(/server exited \(code 1,[\s\S]*refused the connection with no credentials: Authorization Violation/);
  }, 60_000);
});
