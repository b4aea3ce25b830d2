// How every cluster role authenticates to NATS (docs/scale-out.md, "NATS authentication and
// permissions"). The cluster trusts whatever arrives on its subjects (requests, events, lease
// buckets, forced-entry shares), so the transport is where strangers are kept out: nats-server
// checks each connection's credentials and gives each user only its role's subjects. This module
// reads the credentials from the environment once at start (refusing a bad combination or an
// unreadable file before any connection) and builds every role's connection options in one place.
// Secrets live in private fields: describe() and toJSON() name the method and the user or public
// key only, so a log line or a serialised settings object cannot carry them. The TLS settings
// (nats_tls.ts) travel with the credentials: they are read from the same environment at the same
// time and go into the same options.
import { connect, credsAuthenticator, nkeyAuthenticator, nkeys, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { ConfigError } from '../config/checks.js';
import { explainTlsFailure, INFO_PROBE_MS_MAX, NatsTls, probeTlsRefusal, silentServers } from './nats_tls.js';
import { envSetting, readSettingFile } from './setting_file.js';
import { componentLog } from '../util/log.js';

const log = componentLog('cluster');

/** Reconnect at once and forever: a NATS node's restart must not end a role (its peers serve meanwhile). */
const RECONNECT_WAIT_MS = 100;
/**
 * 5 s: the most one connection attempt to one URL waits (TCP, the server's INFO, TLS, CONNECT and
 * its PONG) before the client gives that URL up and tries the next. nats-server sends its INFO on
 * accepting and the rest is a round trip or two; nats.js's default, 20 s, held a start that long on
 * each URL that accepted TCP and said nothing (another service's port, a hung server), and so every
 * reconnection to such a node.
 */
export const NATS_DIAL_TIMEOUT_MS = 5_000;
/** Bigger than any seed (58 characters) or creds file (a JWT of a few KB): a wrong path to a large file is refused, not read whole. */
const CREDENTIAL_FILE_BYTES_MAX = 64 * 1024;

const ENV_USER = 'RINGBOOK_NATS_USER';
const ENV_PASSWORD = 'RINGBOOK_NATS_PASSWORD';
const ENV_TOKEN = 'RINGBOOK_NATS_TOKEN';
const ENV_NKEY_SEED_FILE = 'RINGBOOK_NATS_NKEY_SEED_FILE';
const ENV_CREDS_FILE = 'RINGBOOK_NATS_CREDS_FILE';

type Method =
  | { kind: 'none' }
  | { kind: 'user'; user: string; password: string }
  | { kind: 'token'; token: string }
  | { kind: 'nkey'; file: string; seed: Uint8Array; public_key: string }
  | { kind: 'creds'; file: string; creds: Uint8Array };

function readCredentialFile(name: string, file: string): Uint8Array {
  return readSettingFile(name, file, CREDENTIAL_FILE_BYTES_MAX, 'a NATS credential');
}

function nkeyMethod(file: string): Method {
  const seed = new TextEncoder().encode(new TextDecoder().decode(readCredentialFile(ENV_NKEY_SEED_FILE, file)).trim());
  let public_key: string;
  try {
    public_key = nkeys.fromSeed(seed).getPublicKey();
  } catch {
    // The library's message may quote the bytes it read: say only what is wrong.
    throw new ConfigError(`${ENV_NKEY_SEED_FILE}: ${file} does not hold an NKey seed (one line, SU...: \`nk -gen user\`)`);
  }
  if (!public_key.startsWith('U')) throw new ConfigError(`${ENV_NKEY_SEED_FILE}: ${file} holds a seed of public key ${public_key}, not a user key (U...)`);
  return { kind: 'nkey', file, seed, public_key };
}

function credsMethod(file: string): Method {
  const creds = readCredentialFile(ENV_CREDS_FILE, file);
  const text = new TextDecoder().decode(creds);
  // The two armoured blocks `nsc generate creds` writes (the client library finds them the same way).
  if (!/-{3,}BEGIN NATS USER JWT-{3,}/.test(text) || !/-{3,}BEGIN USER NKEY SEED-{3,}/.test(text)) {
    throw new ConfigError(`${ENV_CREDS_FILE}: ${file} is not a NATS creds file (a USER JWT block and a USER NKEY SEED block)`);
  }
  return { kind: 'creds', file, creds };
}

/** The credentials of this process's NATS connections (none: a server without authorization). */
export class NatsCredentials {
  readonly #method: Method;
  /** The TLS settings of the same connections (none: the client library's default). */
  readonly tls: NatsTls;

  private constructor(method: Method, tls: NatsTls) {
    this.#method = method;
    this.tls = tls;
  }

  static none(): NatsCredentials {
    return new NatsCredentials({ kind: 'none' }, NatsTls.none());
  }

  /**
   * From RINGBOOK_NATS_USER + RINGBOOK_NATS_PASSWORD, or RINGBOOK_NATS_TOKEN, or
   * RINGBOOK_NATS_NKEY_SEED_FILE, or RINGBOOK_NATS_CREDS_FILE: at most one method; and the
   * RINGBOOK_NATS_TLS_* files (NatsTls.fromEnv). The files are read here, so an unreadable one stops
   * the start before any connection.
   */
  static fromEnv(env: NodeJS.ProcessEnv): NatsCredentials {
    const set = (name: string): string | null => envSetting(env, name);
    const user = set(ENV_USER);
    const password = set(ENV_PASSWORD);
    const token = set(ENV_TOKEN);
    const seed_file = set(ENV_NKEY_SEED_FILE);
    const creds_file = set(ENV_CREDS_FILE);
    const given = [
      user !== null || password !== null ? `${ENV_USER}/${ENV_PASSWORD}` : null,
      token !== null ? ENV_TOKEN : null,
      seed_file !== null ? ENV_NKEY_SEED_FILE : null,
      creds_file !== null ? ENV_CREDS_FILE : null,
    ].filter((g): g is string => g !== null);
    if (given.length > 1) throw new ConfigError(`NATS credentials: give one method only, not ${given.join(' and ')}`);
    if (user !== null && password === null) throw new ConfigError(`${ENV_USER} needs ${ENV_PASSWORD}`);
    if (password !== null && user === null) throw new ConfigError(`${ENV_PASSWORD} needs ${ENV_USER}`);
    const method: Method = user !== null && password !== null ? { kind: 'user', user, password }
      : token !== null ? { kind: 'token', token }
      : seed_file !== null ? nkeyMethod(seed_file)
      : creds_file !== null ? credsMethod(creds_file)
      : { kind: 'none' };
    return new NatsCredentials(method, NatsTls.fromEnv(env));
  }

  /** What is used, for logs and errors: the method and the user name, public key or file, and the TLS files; never a secret. */
  describe(): string {
    const tls = this.tls.required() ? ` over ${this.tls.describe()}` : '';
    return this.#describeMethod() + tls;
  }

  #describeMethod(): string {
    const m = this.#method;
    switch (m.kind) {
      case 'none': return 'no credentials';
      case 'user': return `user ${m.user}`;
      case 'token': return 'a token';
      case 'nkey': return `NKey ${m.public_key} (${m.file})`;
      case 'creds': return `creds file ${m.file}`;
    }
  }

  /** A serialised settings object shows the description, not the secrets. */
  toJSON(): string {
    return this.describe();
  }

  /** And so does a template string or String(). */
  toString(): string {
    return this.describe();
  }

  /** The client library's options for this method and the TLS settings. */
  connectOptions(): Pick<NodeConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator' | 'tls'> {
    return { ...this.#methodOptions(), ...this.tls.connectOptions() };
  }

  #methodOptions(): Pick<NodeConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator'> {
    const m = this.#method;
    switch (m.kind) {
      case 'none': return {};
      case 'user': return { user: m.user, pass: m.password };
      case 'token': return { token: m.token };
      case 'nkey': return { authenticator: nkeyAuthenticator(m.seed) };
      case 'creds': return { authenticator: credsAuthenticator(m.creds) };
    }
  }
}

/** connectCluster's waits (the defaults but in tests, which shorten them to stay cheap). */
export interface NatsConnectWaits {
  /** Each URL's connection attempt (nats.js's `timeout`). */
  dial_timeout_ms: number;
  /** The INFO line a failed start waits for from each URL, all at once (silentServers). */
  info_wait_ms: number;
}

const CONNECT_WAITS: NatsConnectWaits = { dial_timeout_ms: NATS_DIAL_TIMEOUT_MS, info_wait_ms: INFO_PROBE_MS_MAX };

/** Every role's connection options: its servers, its name (seen in nats-server's logs and monitoring), its credentials. */
export function natsConnectionOptions(urls: readonly string[], credentials: NatsCredentials, name: string,
  dial_timeout_ms: number = NATS_DIAL_TIMEOUT_MS): NodeConnectionOptions {
  return {
    servers: [...urls], name, maxReconnectAttempts: -1, reconnectTimeWait: RECONNECT_WAIT_MS, timeout: dial_timeout_ms, ...credentials.connectOptions(),
  };
}

/**
 * Throws when a URL accepts TCP but sends no INFO (called once every URL has failed): named, as
 * the operator's to fix, instead of the client library's bare "timeout" (or another URL's error).
 */
async function refuseSilentServers(urls: readonly string[], waits: NatsConnectWaits): Promise<void> {
  const silent = await silentServers(urls, waits.info_wait_ms);
  if (silent.length === 0) return;
  throw new ConfigError(`NATS (${urls.join(',')}): ${silent.join(', ')} accepted the connection but sent no NATS INFO within ` +
    `${waits.info_wait_ms} ms: nats-server sends it at once, so this is not a NATS client port (the HTTP monitoring port, ` +
    `8222, stays silent) or a hung server; each URL is given up after ${waits.dial_timeout_ms} ms (RINGBOOK_NATS_URLS; docs/scale-out.md)`);
}

/** An authentication refusal as nats-server words it (the client library passes its text on). */
const AUTH_REFUSED = /authori[sz]ation violation|authentication/i;

/** What today's connection would fail with as well: the first try's answer is final (a second try would wait as long again). */
function isTimeout(e: unknown): boolean {
  return e instanceof Error && e.name === 'TimeoutError';
}

/** A refusal said plainly (a ConfigError), or null when `e` is none (unreachable, timed out, anything else). */
async function explainRefusal(e: unknown, urls: readonly string[], credentials: NatsCredentials): Promise<ConfigError | null> {
  const why = e instanceof Error ? e.message : String(e);
  if (AUTH_REFUSED.test(why)) {
    return new ConfigError(`NATS (${urls.join(',')}) refused the connection with ${credentials.describe()}: ${why} ` +
      `(the role's credentials: ${ENV_USER}/${ENV_PASSWORD}, ${ENV_TOKEN}, ${ENV_NKEY_SEED_FILE} or ${ENV_CREDS_FILE}; docs/scale-out.md)`);
  }
  return explainTlsFailure(e, urls, credentials.tls);
}

/**
 * Throws what a start where every URL failed is told (`e`: one of their errors): a refusal said
 * plainly, a silent URL named; returns when none is the case (unreachable servers: the real
 * connection tries them again and fails as it always did).
 */
async function refuseFailedStart(e: unknown, urls: readonly string[], credentials: NatsCredentials, waits: NatsConnectWaits): Promise<void> {
  // A timeout asks first whether one said nothing at all (explainRefusal's TLS diagnosis would
  // wait for each one's INFO in turn); another error asks after it.
  if (isTimeout(e)) await refuseSilentServers(urls, waits);
  const refusal = await explainRefusal(e, urls, credentials);
  if (refusal !== null) throw refusal;
  if (isTimeout(e)) throw e;
  await refuseSilentServers(urls, waits);
  // A reset can beat the server's alert to Node (probeTlsRefusal says when): ask the handshake alone.
  for (const url of urls) {
    const alert = await probeTlsRefusal(url, credentials.tls);
    const refused = alert === null ? null : await explainTlsFailure(alert, urls, credentials.tls);
    if (refused !== null) throw refused;
  }
}

/** One URL's refusal of this role said plainly, or null (unreachable, silent, anything else: the real connection may use it later). */
async function refusalAt(url: string, e: unknown, credentials: NatsCredentials): Promise<ConfigError | null> {
  if (isTimeout(e)) return null;
  const refusal = await explainRefusal(e, [url], credentials);
  if (refusal !== null) return refusal;
  const alert = await probeTlsRefusal(url, credentials.tls);
  return alert === null ? null : explainTlsFailure(alert, [url], credentials.tls);
}

/** A first try's outcome at one URL: null when it accepted the role, else its error. */
type FirstTry = { error: unknown } | null;

/** A connection to `url` alone that does not reconnect, closed again once up (connectCluster says why). */
async function firstTry(options: NodeConnectionOptions, url: string): Promise<FirstTry> {
  try {
    const first = await connect({ ...options, servers: [url], reconnect: false });
    await first.close();
    return null;
  } catch (error) {
    return { error };
  }
}

/**
 * Connects a role. A server refusing the credentials, a server certificate not trusted, a server
 * without TLS when TLS is asked for, or one refusing the role's client certificate (or its lack of
 * one): each is a configuration error said plainly (the role then exits non-zero, as for any bad
 * setting) rather than a stack trace, when every URL fails. When another URL accepts the role, a
 * refusing URL is a warning naming it and its cause, and it is left out of the role's connection.
 *
 * The first try is a connection that does not reconnect, closed again once it is up. Why: a
 * server refusing the client certificate sends its TLS alert after the role's side of the
 * handshake is done (TLS 1.3), so nats.js 3.4 has already taken the transport as connected; with
 * reconnection on, the transport's close hands over to its reconnect loop, which is the very
 * connect in progress, and nothing wakes the connect until its timeout (then nats.js's 20 s), which reports
 * "timeout" without the alert. Without reconnection the close ends the connect at once with the
 * alert as its error (ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE, in milliseconds). The try uses the
 * very options of the real connection (TLS, credentials), so it meets the same handshake; its
 * cost is one more connection per URL at a role's start, all at once. One try per URL, not one
 * over the list: without reconnection, nats.js closes the whole connection when a server ends its
 * transport (a TLS alert, or its close after "Authorization Violation") and tries no further URL,
 * so one refusing node would stop a start another node accepts; and each refusing URL is found
 * (nats.js's order is random). A refusing URL is left out of the real connection: with
 * reconnection on, a TLS refusal there costs NATS_DIAL_TIMEOUT_MS per attempt, and a second
 * "Authorization Violation" on one connection makes nats.js give up reconnecting (the role would
 * end); a URL that nats-server's cluster gossip adds back is not covered (docs/scale-out.md).
 * A try's error may still hide the alert behind a reset (probeTlsRefusal): then a handshake alone
 * asks the server. What it does not explain: unreachable servers (connection refused) fail as
 * they always did, from the real connection, which tries them again at once; a timeout is final
 * (the real connection would wait as long again). A URL that accepts TCP but never sends the INFO
 * line costs NATS_DIAL_TIMEOUT_MS (the tries wait for it even when another URL accepted; it
 * stays in the list); when no URL worked, such a one is named (refuseSilentServers, after one
 * more INFO_PROBE_MS_MAX): with one URL, a start fails after about 7 s, not 20 s with "timeout".
 */
export async function connectCluster(urls: readonly string[], credentials: NatsCredentials, name: string,
  waits: NatsConnectWaits = CONNECT_WAITS): Promise<NatsConnection> {
  const options = natsConnectionOptions(urls, credentials, name, waits.dial_timeout_ms);
  const tries = await Promise.all(urls.map((url) => firstTry(options, url)));
  const refusing = new Set<string>();
  if (tries.every((t) => t !== null)) {
    // Every URL failed: today's answer, from one error: a refusal's first (the message names all URLs).
    const errors = tries.map((t) => t.error);
    for (const e of errors.filter((x) => !isTimeout(x))) {
      const refusal = await explainRefusal(e, urls, credentials);
      if (refusal !== null) throw refusal;
    }
    await refuseFailedStart(errors.find((x) => !isTimeout(x)) ?? errors[0], urls, credentials, waits);
  } else {
    for (const [i, t] of tries.entries()) {
      const refusal = t === null ? null : await refusalAt(urls[i], t.error, credentials);
      if (refusal === null) continue;
      refusing.add(urls[i]);
      log.warn(`${name}: NATS URL ${urls[i]} left out, another accepts this role: ${refusal.message}`, { url: urls[i] });
    }
  }
  const servers = urls.filter((u) => !refusing.has(u));
  try {
    return await connect(natsConnectionOptions(servers, credentials, name, waits.dial_timeout_ms));
  } catch (e) {
    throw (await explainRefusal(e, servers, credentials)) ?? e;
  }
}
