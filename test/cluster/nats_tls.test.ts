// TLS on the cluster roles' NATS connections (src/cluster/nats_tls.ts, docs/scale-out.md "TLS to
// NATS"): the settings read and refused at start, and real nats-server 2.9 standalone nodes with a
// tls {} block (certificates made by openssl at test time, test/cluster/tls_certs.ts): a matcher
// role trusting the CA leads, with a client certificate when the server verifies clients; without
// the CA, with another CA, or without the client certificate the server asks for, it exits 1
// saying why. A refused handshake or refused credentials end the connection's first try at once
// with the named cause (before, a missing or refused client certificate showed only at nats.js's
// 20 s connect timeout, as "timeout"); an unreachable server fails as it always did.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config/checks.js';
import { LocalNatsCluster } from '../../src/cluster/local_nats.js';
import { connectCluster, natsConnectionOptions, NatsCredentials } from '../../src/cluster/nats_auth.js';
import { explainTlsFailure, NatsTls, probeTlsRefusal, serverTlsAlert } from '../../src/cluster/nats_tls.js';
import { clusterSettings } from '../../src/cluster/roles.js';
import { ComponentLog } from '../../src/util/log.js';
import { startServer } from '../server/harness.js';
import { leadingFromGenesis } from './cluster_helpers.js';
import { encryptedKey, makeTestPki, type TestPki } from './tls_certs.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-nats-tls-'));
let pki: TestPki;
const clusters: LocalNatsCluster[] = [];
beforeAll(() => {
  pki = makeTestPki(dir);
});
afterAll(async () => {
  for (const c of clusters.splice(0)) await c.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function writeFile(name: string, text: string | Uint8Array): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

const read = (file: string): string => fs.readFileSync(file, 'utf8');
const URLS = { RINGBOOK_NATS_URLS: 'nats://127.0.0.1:4222' };

describe('NATS TLS settings from the environment', () => {
  it('reads a CA and a client certificate; refuses half a pair, unreadable, empty, oversized or non-PEM files, a key not the certificate\'s', () => {
    expect(NatsTls.fromEnv({}).connectOptions()).toEqual({});
    expect(NatsCredentials.fromEnv({}).connectOptions()).toEqual({});
    const ca_only = NatsTls.fromEnv({ RINGBOOK_NATS_TLS_CA_FILE: pki.ca }).connectOptions();
    expect(ca_only).toEqual({ tls: { ca: read(pki.ca), checkServerIdentity: expect.any(Function) } });
    const mtls = NatsCredentials.fromEnv({
      RINGBOOK_NATS_TOKEN: 't', RINGBOOK_NATS_TLS_CA_FILE: pki.ca, RINGBOOK_NATS_TLS_CERT_FILE: pki.client_cert, RINGBOOK_NATS_TLS_KEY_FILE: pki.client_key,
    });
    expect(mtls.connectOptions()).toEqual({
      token: 't', tls: { ca: read(pki.ca), cert: read(pki.client_cert), key: read(pki.client_key), checkServerIdentity: expect.any(Function) },
    });
    expect(mtls.describe()).toBe(`a token over TLS (CA ${pki.ca}, client certificate ${pki.client_cert} (CN=rb-matcher))`);
    // A client certificate alone asks for TLS too, checked against Node's CAs.
    expect(NatsTls.fromEnv({ RINGBOOK_NATS_TLS_CERT_FILE: pki.client_cert, RINGBOOK_NATS_TLS_KEY_FILE: pki.client_key }).describe())
      .toBe(`TLS (Node's default CAs, client certificate ${pki.client_cert} (CN=rb-matcher))`);

    const refused = (env: NodeJS.ProcessEnv, why: RegExp): void => {
      expect(() => NatsCredentials.fromEnv(env)).toThrow(ConfigError);
      expect(() => NatsCredentials.fromEnv(env)).toThrow(why);
    };
    refused({ RINGBOOK_NATS_TLS_CERT_FILE: pki.client_cert }, /RINGBOOK_NATS_TLS_CERT_FILE needs RINGBOOK_NATS_TLS_KEY_FILE/);
    refused({ RINGBOOK_NATS_TLS_KEY_FILE: pki.client_key }, /RINGBOOK_NATS_TLS_KEY_FILE needs RINGBOOK_NATS_TLS_CERT_FILE/);
    refused({ RINGBOOK_NATS_TLS_CA_FILE: path.join(dir, 'missing') }, /RINGBOOK_NATS_TLS_CA_FILE: cannot read .*missing: ENOENT/);
    refused({ RINGBOOK_NATS_TLS_CA_FILE: dir }, /RINGBOOK_NATS_TLS_CA_FILE: cannot read .*: EISDIR/);
    refused({ RINGBOOK_NATS_TLS_CA_FILE: writeFile('empty', '') }, /RINGBOOK_NATS_TLS_CA_FILE: .* holds 0 bytes, not a PEM file/);
    refused({ RINGBOOK_NATS_TLS_CA_FILE: writeFile('huge', Buffer.alloc(1024 * 1024 + 1, 0x41)) }, /holds 1048577 bytes, not a PEM file \(1\.\.1048576\)/);
    refused({ RINGBOOK_NATS_TLS_CA_FILE: writeFile('not-pem', 'hello') }, /RINGBOOK_NATS_TLS_CA_FILE: .* holds no PEM certificate/);
    refused({ RINGBOOK_NATS_TLS_CA_FILE: pki.client_key }, /holds no PEM certificate/);
    refused({ RINGBOOK_NATS_TLS_CA_FILE: writeFile('broken', `${read(pki.ca)}-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n`) },
      /certificate 2 of 2 is not a valid PEM certificate/);
    const pair = (cert: string, key: string): NodeJS.ProcessEnv => ({ RINGBOOK_NATS_TLS_CERT_FILE: cert, RINGBOOK_NATS_TLS_KEY_FILE: key });
    refused(pair(pki.client_key, pki.client_key), /RINGBOOK_NATS_TLS_CERT_FILE: .* holds no PEM certificate/);
    refused(pair(pki.client_cert, pki.client_cert), /RINGBOOK_NATS_TLS_KEY_FILE: .* holds no PEM private key/);
    refused(pair(pki.client_cert, writeFile('broken-key', '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n')), /is not a valid PEM private key/);
    refused(pair(pki.client_cert, pki.server_key), /RINGBOOK_NATS_TLS_KEY_FILE: .* is not the key of the certificate in .*rb-matcher\.pem \(CN=rb-matcher\)/);
    refused(pair(pki.client_cert, encryptedKey(dir, pki.client_key)), /is an encrypted key/);
    // The same refusals stop a role's settings.
    expect(() => clusterSettings('matcher', { ...URLS, RINGBOOK_NATS_TLS_CERT_FILE: pki.client_cert })).toThrow(/needs RINGBOOK_NATS_TLS_KEY_FILE/);
  });

  it('no description or serialisation of the settings carries the key', () => {
    const key = read(pki.client_key);
    const key_body = key.split('\n')[1];
    const s = clusterSettings('matcher', {
      ...URLS, RINGBOOK_NATS_TLS_CA_FILE: pki.ca, RINGBOOK_NATS_TLS_CERT_FILE: pki.client_cert, RINGBOOK_NATS_TLS_KEY_FILE: pki.client_key,
    });
    for (const text of [JSON.stringify(s), s.nats_credentials.describe(), String(s.nats_credentials), `${s.nats_credentials.tls}`, JSON.stringify(s.nats_credentials.tls)]) {
      expect(text).toContain('TLS (CA');
      expect(text).not.toContain(key_body);
    }
    expect(natsConnectionOptions(s.nats_urls, s.nats_credentials, 'x').tls).toMatchObject({ ca: read(pki.ca), cert: read(pki.client_cert), key });
  });
});

describe('a TLS alert said plainly', () => {
  const failure = (code: string, message: string): Error => Object.assign(new Error(message), { code });

  it('names the alert from Node\'s code and OpenSSL\'s number; another alert than a certificate\'s is not blamed on the client certificate', async () => {
    expect(serverTlsAlert(failure('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'ssl3_read_bytes:tlsv13 alert certificate required:...:SSL alert number 116')))
      .toBe('TLS alert "certificate required" (116)');
    expect(serverTlsAlert(failure('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'unknown ca'))).toBe('TLS alert "unknown ca"');
    expect(serverTlsAlert(failure('ECONNRESET', 'read ECONNRESET'))).toBeNull();
    expect(serverTlsAlert(null)).toBeNull();
    // Nothing listens on these URLs: the explanation cannot read an INFO, the alert alone is a refusal.
    const refused = await explainTlsFailure(failure('ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', 'SSL alert number 40'), ['nats://127.0.0.1:1'], NatsTls.none());
    expect(refused).toBeInstanceOf(ConfigError);
    expect(String(refused)).toMatch(/NATS \(nats:\/\/127\.0\.0\.1:1\) refused this role's TLS handshake \(TLS alert "handshake failure" \(40\)\) with no TLS settings/);
    expect(await explainTlsFailure(failure('ECONNRESET', 'read ECONNRESET'), ['nats://127.0.0.1:1'], NatsTls.none())).toBeNull();
  });
});

/** A standalone node requiring TLS; `verify`: and a client certificate its CA signed. */
async function tlsNode(verify: boolean): Promise<LocalNatsCluster> {
  const nats = await LocalNatsCluster.start(1, 'nats-server', null, {
    cert_file: pki.server_cert, key_file: pki.server_key, ca_file: pki.ca, verify,
    client: { ca: read(pki.ca), ...(verify ? { cert: read(pki.client_cert), key: read(pki.client_key) } : {}) },
  });
  clusters.push(nats);
  return nats;
}

function matcherEnv(nats: LocalNatsCluster, id: string): Record<string, string> {
  return { RINGBOOK_NATS_URLS: nats.urls().join(','), RINGBOOK_ROLE: 'matcher', RINGBOOK_NODE_ID: id, RINGBOOK_CLUSTER_REPLICAS: '1' };
}

describe('NATS TLS against nats-server', () => {
  it('TLS required: a matcher trusting the CA leads; without the CA or with another CA it exits 1 saying the certificate was not trusted', async () => {
    const nats = await tlsNode(false);
    const env = matcherEnv(nats, 'm-tls');
    const m = await startServer({ env: { ...env, RINGBOOK_NATS_TLS_CA_FILE: pki.ca } });
    try {
      await leadingFromGenesis(m);
    } finally {
      await m.stop('SIGKILL');
    }
    await expect(startServer({ env })).rejects.toThrow(
      /server exited \(code 1,[\s\S]*the server's TLS certificate was not trusted: unable to verify the first certificate[\s\S]*RINGBOOK_NATS_TLS_CA_FILE is not set/);
    await expect(startServer({ env: { ...env, RINGBOOK_NATS_TLS_CA_FILE: pki.other_ca } })).rejects.toThrow(
      /server exited \(code 1,[\s\S]*the server's TLS certificate was not trusted[\s\S]*RINGBOOK_NATS_TLS_CA_FILE must hold the CA that signed/);
  }, 45_000);

  it('mutual TLS: a matcher with a client certificate leads; without one it exits 1 saying the server asks for it', async () => {
    const nats = await tlsNode(true);
    const env = matcherEnv(nats, 'm-mtls');
    const m = await startServer({
      env: { ...env, RINGBOOK_NATS_TLS_CA_FILE: pki.ca, RINGBOOK_NATS_TLS_CERT_FILE: pki.client_cert, RINGBOOK_NATS_TLS_KEY_FILE: pki.client_key },
    });
    try {
      await leadingFromGenesis(m);
      const out = m.output();
      expect(out.stdout + out.stderr).not.toContain(read(pki.client_key).split('\n')[1]);
    } finally {
      await m.stop('SIGKILL');
    }
    // nats-server refuses with a TLS alert after the role's side of the handshake is done: the
    // first try (no reconnection) gets it at once (before: nats.js's 20 s connect timeout).
    await expect(startServer({ env: { ...env, RINGBOOK_NATS_TLS_CA_FILE: pki.ca } })).rejects.toThrow(
      /server exited \(code 1,[\s\S]*missing client certificate: nats:\/\/127\.0\.0\.1:\d+ asks for a client certificate \(tls \{ verify: true \}\) and this role has none \(TLS alert \W+(bad certificate|certificate required)\W+\(\d+\)\)[\s\S]*RINGBOOK_NATS_TLS_CERT_FILE and RINGBOOK_NATS_TLS_KEY_FILE/);
  }, 30_000);

  it('each refusal ends the first try with its cause (missing or refused client certificate, untrusted server, bad password); the good settings leave one connection', async () => {
    const nats = await LocalNatsCluster.start(1, 'nats-server', {
      authorization: 'authorization { users: [ { user: "rb", password: "right-password" } ] }', env: {}, client: { user: 'rb', pass: 'right-password' },
    }, {
      cert_file: pki.server_cert, key_file: pki.server_key, ca_file: pki.ca, verify: true,
      client: { ca: read(pki.ca), cert: read(pki.client_cert), key: read(pki.client_key) },
    });
    clusters.push(nats);
    const url = nats.urls()[0].replace(/\./g, '\\.');
    const user = { RINGBOOK_NATS_USER: 'rb', RINGBOOK_NATS_PASSWORD: 'right-password' };
    const certificate = (cert: string, key: string): NodeJS.ProcessEnv => ({ RINGBOOK_NATS_TLS_CERT_FILE: cert, RINGBOOK_NATS_TLS_KEY_FILE: key });
    const refused = async (env: NodeJS.ProcessEnv): Promise<string> => {
      const e = await connectCluster(nats.urls(), NatsCredentials.fromEnv(env), 'test-refused').then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(ConfigError);
      return String(e);
    };
    // Go's TLS 1.3 (nats-server 2.9.10) sends "bad certificate"; newer Go "certificate required" when there is none.
    expect(await refused({ ...user, RINGBOOK_NATS_TLS_CA_FILE: pki.ca })).toMatch(new RegExp(
      `missing client certificate: ${url} asks for a client certificate \\(tls \\{ verify: true \\}\\) and this role has none \\(TLS alert "(bad certificate|certificate required)" \\(\\d+\\)\\): set RINGBOOK_NATS_TLS_CERT_FILE`));
    // A reset often beats this alert to Node (the server is still checking the chain when nats.js's
    // CONNECT arrives): a few tries take both paths (probeTlsRefusal's handshake alone, or the alert).
    const other_ca_client = { ...user, RINGBOOK_NATS_TLS_CA_FILE: pki.ca, ...certificate(pki.other_client_cert, pki.other_client_key) };
    for (let i = 0; i < 3; i++) {
      expect(await refused(other_ca_client)).toMatch(new RegExp(
        `client certificate not accepted: ${url} asks for a client certificate .* refused TLS \\(CA .*, client certificate .*rb-other-matcher\\.pem \\(CN=rb-other-matcher\\)\\) \\(TLS alert "bad certificate"`));
    }
    expect(serverTlsAlert(await probeTlsRefusal(nats.urls()[0], NatsTls.fromEnv(other_ca_client)))).toMatch(/^TLS alert "bad certificate" \(42\)$/);
    expect(await refused({ ...user, RINGBOOK_NATS_TLS_CA_FILE: pki.other_ca, ...certificate(pki.client_cert, pki.client_key) }))
      .toMatch(/the server's TLS certificate was not trusted: .*RINGBOOK_NATS_TLS_CA_FILE must hold the CA that signed/);
    const mtls = { RINGBOOK_NATS_TLS_CA_FILE: pki.ca, ...certificate(pki.client_cert, pki.client_key) };
    expect(await refused({ ...mtls, RINGBOOK_NATS_USER: 'rb', RINGBOOK_NATS_PASSWORD: 'wrong-password' }))
      .toMatch(/refused the connection with user rb over TLS \(CA .*\): Authorization Violation/);

    // Beside a node that accepts the role (TLS without client certificates), the one asking for a
    // certificate is a warning naming it, whichever comes first. On the old code (one try over the
    // list, nats.js's order random) the alert ended the start whenever the refusing node came first.
    const accepting = await tlsNode(false);
    const warn = vi.spyOn(ComponentLog.prototype, 'warn');
    try {
      for (const urls of [[...nats.urls(), ...accepting.urls()], [...accepting.urls(), ...nats.urls()]]) {
        warn.mockClear();
        const beside = await connectCluster(urls, NatsCredentials.fromEnv({ ...user, RINGBOOK_NATS_TLS_CA_FILE: pki.ca }), 'test-beside');
        await beside.flush();
        await beside.close();
        const lines = warn.mock.calls.map((c) => c[0]);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(new RegExp(`NATS URL ${url} left out, another accepts this role: .*missing client certificate: ${url} asks for a client certificate`));
      }
    } finally {
      warn.mockRestore();
    }

    // The handshake alone, accepted: no alert within its wait.
    expect(await probeTlsRefusal(nats.urls()[0], NatsTls.fromEnv(mtls))).toBeNull();
    const nc = await connectCluster(nats.urls(), NatsCredentials.fromEnv({ ...user, ...mtls }), 'test-good');
    try {
      await nc.flush();
      // The first try was closed: the server holds the role's one connection.
      const connz = await (await fetch(`http://127.0.0.1:${nats.nodes[0].monitor_port}/connz`)).json() as { connections: { name?: string }[] };
      expect(connz.connections.map((c) => c.name ?? '')).toEqual(['test-good']);
    } finally {
      await nc.close();
    }
  }, 30_000);

  it('an unreachable server fails as before: connection refused, not a configuration error', async () => {
    // A port nothing listens on: bound, then closed.
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    for (const env of [{}, { RINGBOOK_NATS_TLS_CA_FILE: pki.ca, RINGBOOK_NATS_TLS_CERT_FILE: pki.client_cert, RINGBOOK_NATS_TLS_KEY_FILE: pki.client_key }]) {
      const e = await connectCluster([`nats://127.0.0.1:${port}`], NatsCredentials.fromEnv(env), 'test-unreachable').then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(Error);
      expect(e).not.toBeInstanceOf(ConfigError);
      expect(String(e)).toMatch(/connection refused/);
    }
  }, 30_000);

  it('the certificate must name the host of the URL, an IP URL included (not "localhost", as Node checks when nats.js names no server)', async () => {
    const nats = await LocalNatsCluster.start(1, 'nats-server', null, {
      cert_file: pki.localhost_cert, key_file: pki.localhost_key,
      // This class's own client connects to 127.0.0.1, which this certificate does not name.
      client: { ca: read(pki.ca), rejectUnauthorized: false },
    });
    clusters.push(nats);
    const credentials = NatsCredentials.fromEnv({ RINGBOOK_NATS_TLS_CA_FILE: pki.ca });
    await expect(connectCluster(nats.urls(), credentials, 'test-ip'))
      .rejects.toThrow(/the server's TLS certificate was not trusted: Hostname\/IP does not match certificate's altnames: IP: 127\.0\.0\.1 is not in the cert's list.*must name the host of each URL/);
    const nc = await connectCluster([`nats://localhost:${nats.nodes[0].client_port}`], credentials, 'test-name');
    await nc.flush();
    await nc.close();
  }, 30_000);

  it('a TLS setting against a server without TLS is refused, not sent in the clear', async () => {
    const nats = await LocalNatsCluster.start(1);
    clusters.push(nats);
    await expect(connectCluster(nats.urls(), NatsCredentials.fromEnv({ RINGBOOK_NATS_TLS_CA_FILE: pki.ca }), 'test-plain'))
      .rejects.toThrow(/does not offer TLS, while TLS \(CA .*\) asks for it/);
  }, 30_000);
});
