// TLS on the roles' NATS connections (docs/scale-out.md, "TLS to NATS"). Without it a password or
// token crosses the network in the clear and anyone on the path can read or alter the requests and
// batches. The files are read and parsed here, once at start, so an unreadable or malformed one
// stops the start before any connection (as nats_auth.ts does with the credential files); the
// client library then gets their contents, not their paths, and never reads a file itself. The key
// lives in a private field: describe() and toJSON() name the files only.
import net from 'node:net';
import { checkServerIdentity as nodeCheckServerIdentity, connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { NodeConnectionOptions } from '@nats-io/transport-node';
import { ConfigError } from '../config/checks.js';
import { envSetting, readSettingFile } from './setting_file.js';

/** Bigger than a CA bundle of a few hundred certificates (the whole Mozilla set is ~220 KB); a wrong path to a large file is refused, not read whole. */
const TLS_FILE_BYTES_MAX = 1024 * 1024;
/** Certificates read from one CA file at most (each is parsed at start). */
const CA_CERTIFICATES_MAX = 1000;
/**
 * How long the diagnosis of a failed connection waits for a server's INFO line (probeServerInfo,
 * silentServers): nats-server sends it on accepting, so a healthy one answers in a round trip.
 */
export const INFO_PROBE_MS_MAX = 2_000;
/**
 * How long probeTlsRefusal waits after its side of the handshake for the server's alert: a server
 * refuses a client certificate within milliseconds of reading it (a chain check); a loaded machine
 * gets a wide margin. Spent only when a failed connection's error hid its cause and the server took
 * the certificate after all.
 */
const TLS_ALERT_WAIT_MS = 2_000;
/** An INFO line is ~300 bytes plus the cluster's client URLs: more than this is not a NATS server. */
const INFO_BYTES_MAX = 64 * 1024;

export const ENV_TLS_CA_FILE = 'RINGBOOK_NATS_TLS_CA_FILE';
export const ENV_TLS_CERT_FILE = 'RINGBOOK_NATS_TLS_CERT_FILE';
export const ENV_TLS_KEY_FILE = 'RINGBOOK_NATS_TLS_KEY_FILE';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function readTlsFile(name: string, file: string): string {
  return readSettingFile(name, file, TLS_FILE_BYTES_MAX, 'a PEM file').toString('utf8');
}

/** The PEM certificates of a file, each parsed (a broken block is refused here, not at the handshake). */
function readCertificates(name: string, file: string): { pem: string; subjects: string[] } {
  const pem = readTlsFile(name, file);
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new ConfigError(`${name}: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  if (blocks.length > CA_CERTIFICATES_MAX) throw new ConfigError(`${name}: ${file} holds ${blocks.length} certificates, more than ${CA_CERTIFICATES_MAX}`);
  const subjects = blocks.map((b, i) => {
    try {
      return new X509Certificate(b).subject.replace(/\n/g, ', ');
    } catch {
      throw new ConfigError(`${name}: ${file}: certificate ${i + 1} of ${blocks.length} is not a valid PEM certificate`);
    }
  });
  return { pem, subjects };
}

interface CaFile {
  file: string;
  pem: string;
  count: number;
}

interface ClientCertificate {
  cert_file: string;
  key_file: string;
  cert: string;
  /** PEM of the private key: passed to the TLS handshake only, never shown. */
  key: string;
  subject: string;
}

function readClientCertificate(cert_file: string, key_file: string): ClientCertificate {
  const { pem: cert, subjects } = readCertificates(ENV_TLS_CERT_FILE, cert_file);
  const key = readTlsFile(ENV_TLS_KEY_FILE, key_file);
  // Say what is wrong without quoting the file (it is a secret, and the library's message may).
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(key)) {
    throw new ConfigError(`${ENV_TLS_KEY_FILE}: ${key_file} is an encrypted key: give it unencrypted (readable by this role only; there is no passphrase setting)`);
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) throw new ConfigError(`${ENV_TLS_KEY_FILE}: ${key_file} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`);
  let matches: boolean;
  try {
    matches = new X509Certificate(cert).checkPrivateKey(createPrivateKey({ key, format: 'pem' }));
  } catch {
    throw new ConfigError(`${ENV_TLS_KEY_FILE}: ${key_file} is not a valid PEM private key`);
  }
  if (!matches) throw new ConfigError(`${ENV_TLS_KEY_FILE}: ${key_file} is not the key of the certificate in ${cert_file} (${subjects[0]})`);
  return { cert_file, key_file, cert, key, subject: subjects[0] };
}

/**
 * The server certificate's name check, against the host of the URL. nats.js gives Node no server
 * name for an IP URL (nats://10.0.0.5:4222), and Node then checks the certificate against
 * "localhost": any certificate of the CA naming localhost passed for any IP (seen with nats.js
 * 3.4 on Node 20: a node on 127.0.0.2 with a certificate for 127.0.0.1 and localhost was
 * accepted). Node calls this as a method of the connection's options, which hold the socket: when
 * it fell back to "localhost" for want of a server name, the peer's address is the name to check.
 * (Anything else, or no socket: Node's own check of Node's name.)
 */
function checkServerIdentity(this: { servername?: string; socket?: net.Socket } | undefined, hostname: string, cert: PeerCertificate): Error | undefined {
  const ip = this?.socket?.remoteAddress;
  const fell_back = hostname === 'localhost' && this !== undefined && (this.servername ?? '') === '';
  return nodeCheckServerIdentity(fell_back && ip !== undefined && net.isIP(ip) !== 0 ? ip : hostname, cert);
}

/** How this process's NATS connections use TLS. */
export class NatsTls {
  readonly #ca: CaFile | null;
  readonly #client: ClientCertificate | null;

  private constructor(ca: CaFile | null, client: ClientCertificate | null) {
    this.#ca = ca;
    this.#client = client;
  }

  /** No TLS settings: the client library's default (TLS when the server asks for it, checked against Node's CAs). */
  static none(): NatsTls {
    return new NatsTls(null, null);
  }

  /**
   * From RINGBOOK_NATS_TLS_CA_FILE (trust this CA only) and RINGBOOK_NATS_TLS_CERT_FILE +
   * RINGBOOK_NATS_TLS_KEY_FILE (a client certificate; both or neither). Either one makes TLS
   * required: a server without TLS is refused, not talked to in the clear.
   */
  static fromEnv(env: NodeJS.ProcessEnv): NatsTls {
    const set = (name: string): string | null => envSetting(env, name);
    const ca_file = set(ENV_TLS_CA_FILE);
    const cert_file = set(ENV_TLS_CERT_FILE);
    const key_file = set(ENV_TLS_KEY_FILE);
    if (cert_file !== null && key_file === null) throw new ConfigError(`${ENV_TLS_CERT_FILE} needs ${ENV_TLS_KEY_FILE} (the client certificate's private key)`);
    if (key_file !== null && cert_file === null) throw new ConfigError(`${ENV_TLS_KEY_FILE} needs ${ENV_TLS_CERT_FILE} (the client certificate)`);
    const ca = ca_file === null ? null : (() => {
      const { pem, subjects } = readCertificates(ENV_TLS_CA_FILE, ca_file);
      return { file: ca_file, pem, count: subjects.length };
    })();
    const client = cert_file !== null && key_file !== null ? readClientCertificate(cert_file, key_file) : null;
    return new NatsTls(ca, client);
  }

  /** Whether a setting asks for TLS (then a server without it is refused). */
  required(): boolean {
    return this.#ca !== null || this.#client !== null;
  }

  hasCa(): boolean {
    return this.#ca !== null;
  }

  hasClientCertificate(): boolean {
    return this.#client !== null;
  }

  /** The files used, for logs and errors; never the key. Empty without settings. */
  describe(): string {
    if (!this.required()) return '';
    const ca = this.#ca === null ? "Node's default CAs" : `CA ${this.#ca.file}${this.#ca.count > 1 ? ` (${this.#ca.count} certificates)` : ''}`;
    const client = this.#client === null ? 'no client certificate' : `client certificate ${this.#client.cert_file} (${this.#client.subject})`;
    return `TLS (${ca}, ${client})`;
  }

  toJSON(): string {
    return this.describe();
  }

  toString(): string {
    return this.describe();
  }

  /**
   * The client library's `tls` option: contents, not paths (the files were checked here), and the
   * name check of an IP URL. nats.js passes the object's fields on to node:tls.
   */
  connectOptions(): Pick<NodeConnectionOptions, 'tls'> {
    if (!this.required()) return {};
    const tls: NonNullable<NodeConnectionOptions['tls']> & { checkServerIdentity: typeof checkServerIdentity } = {
      ...(this.#ca === null ? {} : { ca: this.#ca.pem }),
      ...(this.#client === null ? {} : { cert: this.#client.cert, key: this.#client.key }),
      checkServerIdentity,
    };
    return { tls };
  }
}

/** Node's codes for a server certificate that did not verify (node:tls, OpenSSL's X509_V_ERR_*). */
const UNTRUSTED_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED',
  'CERT_REJECTED', 'INVALID_CA', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The INFO fields a refusal's explanation needs (nats-server sends INFO first on every connection). */
export interface ServerTlsInfo {
  tls_required: boolean;
  tls_verify: boolean;
}

/** Why no INFO came: no TCP connection, a connection but no byte within the wait, or bytes that are no INFO line. */
export type NoInfo = 'unreachable' | 'silent' | 'not_nats';

/** A server's INFO and the socket it came on (still open: the caller ends it), or why there is none. */
function readServerInfo(url: string, wait_ms: number = INFO_PROBE_MS_MAX): Promise<{ socket: net.Socket; host: string; info: ServerTlsInfo } | { no_info: NoInfo }> {
  const m = /^nats:\/\/([^\s,:/]+|\[[0-9a-fA-F:]+\]):([0-9]+)$/.exec(url);
  if (m === null) return Promise.resolve({ no_info: 'unreachable' });
  const host = m[1].replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    let text = '';
    let connected = false;
    const s = net.connect(Number(m[2]), host);
    // A hard bound from the connect on (an idle timeout would let a server trickling bytes hold it longer).
    const timer = setTimeout(() => done(connected && text === '' ? 'silent' : connected ? 'not_nats' : 'unreachable'), wait_ms);
    const done = (info: ServerTlsInfo | NoInfo): void => {
      clearTimeout(timer);
      s.removeAllListeners();
      if (typeof info === 'string') {
        s.on('error', () => undefined);
        s.destroy();
        resolve({ no_info: info });
      } else {
        resolve({ socket: s, host, info });
      }
    };
    s.on('connect', () => (connected = true));
    s.on('error', () => done(connected ? 'not_nats' : 'unreachable'));
    s.on('close', () => done(connected ? 'not_nats' : 'unreachable'));
    s.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      const end = text.indexOf('\r\n');
      if (end < 0) {
        if (text.length > INFO_BYTES_MAX) done('not_nats');
        return;
      }
      try {
        const info = JSON.parse(/^INFO\s+(.*)$/.exec(text.slice(0, end))?.[1] ?? 'null') as Record<string, unknown> | null;
        done(info === null ? 'not_nats' : { tls_required: info.tls_required === true, tls_verify: info.tls_verify === true });
      } catch {
        done('not_nats');
      }
    });
  });
}

/**
 * The URLs of `urls` that accept a TCP connection but send no INFO line within `wait_ms`, all asked
 * at once (so the wait is spent once). nats-server sends its INFO the moment it accepts a client
 * connection; silence is another service's port (its HTTP monitoring port, 8222, waits for a
 * request) or a hung server. Only to explain a failed connection: it sends nothing.
 */
export async function silentServers(urls: readonly string[], wait_ms: number = INFO_PROBE_MS_MAX): Promise<string[]> {
  const reads = await Promise.all(urls.map(async (url) => {
    const r = await readServerInfo(url, wait_ms);
    if ('socket' in r) r.socket.destroy();
    return 'no_info' in r && r.no_info === 'silent' ? url : null;
  }));
  return reads.filter((u): u is string => u !== null);
}

/**
 * Reads the INFO line of a nats://host:port server, or null (unreachable, silent, not NATS). Only
 * to explain a failed connection: it sends nothing, so the server sees a client that left (a TLS
 * server may log a handshake error for it).
 */
export async function probeServerInfo(url: string): Promise<ServerTlsInfo | null> {
  const r = await readServerInfo(url);
  if ('no_info' in r) return null;
  r.socket.destroy();
  return r.info;
}

/**
 * The error a TLS server ends this role's handshake with (its alert, or its certificate not
 * trusted), or null: accepted (nothing came within TLS_ALERT_WAIT_MS of the handshake), no TLS
 * there, unreachable. Only to explain a failed connection whose error hid the cause: nats.js
 * writes its CONNECT as soon as its side of the handshake is done, and a server that refuses the
 * client certificate while that CONNECT is still unread in its socket closes with a reset, which
 * can reach Node before the alert is read (the connection then fails with "ECONNRESET"; seen with
 * nats-server 2.9.10 for a certificate of another CA, 1 or 2 times in 3). This handshake writes
 * nothing after it, so the server reads all it was sent, closes cleanly and the alert arrives.
 */
export async function probeTlsRefusal(url: string, tls: NatsTls): Promise<Error | null> {
  const r = await readServerInfo(url);
  if ('no_info' in r) return null;
  if (!r.info.tls_required && !tls.required()) {
    r.socket.destroy();
    return null;
  }
  const { socket, host } = r;
  return new Promise((resolve) => {
    // As nats.js: a server name for a host name only (checkServerIdentity above handles an IP).
    const t = tlsConnect({ socket, servername: net.isIP(host) === 0 ? host : '', rejectUnauthorized: true, ...tls.connectOptions().tls });
    let timer: NodeJS.Timeout | undefined;
    const done = (v: Error | null): void => {
      clearTimeout(timer);
      t.removeAllListeners();
      t.on('error', () => undefined);
      t.destroy();
      socket.destroy();
      resolve(v);
    };
    t.on('error', (e: Error) => done(e));
    t.on('close', () => done(null));
    t.on('data', () => done(null));
    t.on('secureConnect', () => {
      clearTimeout(timer);
      timer = setTimeout(() => done(null), TLS_ALERT_WAIT_MS);
    });
    // A server silent in the handshake itself: as long as an INFO is waited for.
    timer = setTimeout(() => done(null), INFO_PROBE_MS_MAX);
  });
}

/**
 * The TLS alert a server ended the handshake with, said plainly (`TLS alert "bad certificate" (42)`),
 * or null when `e` is not one. Node names it in the code (ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE,
 * ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED, ERR_SSL_TLSV1_ALERT_UNKNOWN_CA) and OpenSSL gives the
 * number in the message ("SSL alert number 42"). nats-server 2.9.10 (Go's TLS 1.3) sends "bad
 * certificate" both for no client certificate and for one its ca_file did not sign; newer Go sends
 * "certificate required" for the first.
 */
export function serverTlsAlert(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  const m = /^ERR_SSL_(?:SSLV3|TLSV1[0-9]?)_ALERT_([A-Z0-9_]+)$/.exec(code);
  if (m === null) return null;
  const number = /SSL alert number ([0-9]+)/.exec(e instanceof Error ? e.message : '')?.[1];
  return `TLS alert "${m[1].toLowerCase().replace(/_/g, ' ')}"${number === undefined ? '' : ` (${number})`}`;
}

/**
 * A failed connection's TLS cause said plainly (a ConfigError: the role exits 1), or null when it
 * is not about TLS. `why` is the client library's error. A server refusing the role's client
 * certificate (or its lack of one) does so with a TLS alert after the role's side of the handshake
 * is done (TLS 1.3); connectCluster's first try (nats_auth.ts) gets that alert at once, while a
 * connection that reconnects only notices at its connect timeout. Either way `servers` are then
 * asked for their INFO, to say whether they ask for client certificates.
 */
export async function explainTlsFailure(e: unknown, urls: readonly string[], tls: NatsTls): Promise<ConfigError | null> {
  const why = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  const at = `NATS (${urls.join(',')})`;
  if (typeof code === 'string' && UNTRUSTED_CODES.has(code)) {
    const trust = code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? `the nats-server's certificate must name the host of each URL (subjectAltName IP:... or DNS:...)`
      : tls.hasCa()
        ? `${ENV_TLS_CA_FILE} must hold the CA that signed the nats-server's certificate`
        : `${ENV_TLS_CA_FILE} is not set, so Node's default CAs were asked: set it to the CA that signed the nats-server's certificate`;
    return new ConfigError(`${at}: the server's TLS certificate was not trusted: ${why} (${code}); ${trust}; docs/scale-out.md, "TLS to NATS"`);
  }
  if (/server does not support 'tls'/.test(why)) {
    return new ConfigError(`${at} does not offer TLS, while ${tls.describe()} asks for it: give nats-server a tls {} block or unset ` +
      `${ENV_TLS_CA_FILE}/${ENV_TLS_CERT_FILE}/${ENV_TLS_KEY_FILE}; docs/scale-out.md, "TLS to NATS"`);
  }
  const alert = serverTlsAlert(e);
  if (alert === null && !/timeout/i.test(why)) return null;
  const cause = alert ?? why;
  // Another alert (handshake failure, protocol version: no common cipher or TLS version) is not the client certificate's.
  const about_certificate = alert === null || /certificate|unknown ca|access denied/.test(alert);
  for (const url of about_certificate ? urls : []) {
    const info = await probeServerInfo(url);
    if (info === null || !info.tls_verify) continue;
    return new ConfigError(tls.hasClientCertificate()
      ? `${at}: client certificate not accepted: ${url} asks for a client certificate (tls { verify: true }) and refused ${tls.describe()} (${cause}): ` +
        `nats-server's log says why ("TLS handshake error"): a certificate its ca_file did not sign, an expired one, or one without clientAuth usage; docs/scale-out.md, "TLS to NATS"`
      : `${at}: missing client certificate: ${url} asks for a client certificate (tls { verify: true }) and this role has none (${cause}): ` +
        `set ${ENV_TLS_CERT_FILE} and ${ENV_TLS_KEY_FILE}; docs/scale-out.md, "TLS to NATS"`);
  }
  // An alert is the server's refusal whatever its INFO says (or if it no longer answers): not transient.
  return alert === null ? null : new ConfigError(`${at} refused this role's TLS handshake (${alert}) with ${tls.describe() || 'no TLS settings'}: ` +
    `nats-server's log says why ("TLS handshake error"); docs/scale-out.md, "TLS to NATS"`);
}
