// A JetStream cluster of real `nats-server` processes on loopback ports in a temporary directory:
// what the cluster tests and bench/cluster.ts run against, and a quick way for an operator to try
// the cluster roles on one machine. Debian's nats-server (2.9) is enough: nothing here or in the
// roles needs a newer server (docs/scale-out.md, "NATS server version").
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect, type NodeConnectionOptions } from '@nats-io/transport-node';
import { freePort } from '../util/free_port.js';
import { stopChild } from '../util/child_stop.js';
import { jetStreamReady, JETSTREAM_READY_MS_MAX, LOG_MESSAGE_BYTES_MAX } from './log_format.js';

/** How long one node may take to accept client connections. */
const NODE_START_MS_MAX = 10_000;
/** Cluster starts tried when a node could not bind a port handed out by freePort (taken in between). */
const START_ATTEMPTS_MAX = 3;
/** How long a clean stop may take before SIGKILL. */
const NODE_STOP_MS_MAX = 5_000;
/**
 * Tries of a restart (restart()) whose ports another process holds, RESTART_WAIT_MS apart: an
 * outgoing connection's ephemeral port, say, is free again once that connection ends.
 */
const RESTART_ATTEMPTS_MAX = 5;
const RESTART_WAIT_MS = 500;
/** The bind failures nats-server exits with (monitor, client and route ports alike). */
const PORT_IN_USE = /address already in use/;

/**
 * Client authentication and authorization (docs/scale-out.md, "NATS authentication and
 * permissions"): without it the nodes let any client in and do anything.
 */
export interface LocalNatsAuth {
  /**
   * Server configuration text holding an `authorization { ... }` block, written into every node's
   * config as it is (config/nats-authorization.conf, which the docs show, is one).
   */
  authorization: string;
  /** Environment variables of the nats-server processes: the `$NAME` references in `authorization` (passwords). */
  env: Record<string, string>;
  /** Credentials this class's own client uses (waitForJetStream: `$JS.API.INFO`), e.g. `{ user, pass }`. */
  client: Pick<NodeConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator'>;
}

/**
 * TLS on the client port (docs/scale-out.md, "TLS to NATS"): every node's `tls { ... }` block. The
 * routes between nodes stay plain: they run on loopback here (a real deployment gives its
 * `cluster {}` block a `tls {}` of its own).
 */
export interface LocalNatsTls {
  /** The server's certificate and key (PEM files; the certificate must name 127.0.0.1). */
  cert_file: string;
  key_file: string;
  /** The CA the server checks client certificates against (with `verify`). */
  ca_file?: string;
  /** true: every client must present a certificate ca_file signed (mutual TLS). */
  verify?: boolean;
  /** TLS options of this class's own client (waitForJetStream), e.g. `{ ca, cert, key }` contents. */
  client: NonNullable<NodeConnectionOptions['tls']>;
}

export interface NatsNode {
  name: string;
  client_port: number;
  cluster_port: number;
  /** nats-server's monitoring port (loopback): GET /jsz says who leads the JetStream meta layer. */
  monitor_port: number;
  proc: ChildProcess | null;
  /** The last 20,000 characters of the node's output since it was last started. */
  log: string;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

export class LocalNatsCluster {
  readonly dir: string;
  readonly nodes: NatsNode[] = [];
  private readonly binary: string;
  private readonly auth: LocalNatsAuth | null;
  private readonly tls: LocalNatsTls | null;

  private constructor(dir: string, binary: string, auth: LocalNatsAuth | null, tls: LocalNatsTls | null) {
    this.dir = dir;
    this.binary = binary;
    this.auth = auth;
    this.tls = tls;
  }

  /**
   * Starts `size` nodes (3 for R3 streams; 1: a standalone server, R1 only) and waits until each accepts clients. A port freePort
   * handed out can be taken before nats-server binds it (an outgoing connection's ephemeral port:
   * seen with two test files starting clusters at once, 2 of 9 runs); then the whole cluster is
   * started again on fresh ports, at most START_ATTEMPTS_MAX times. `auth`: clients must
   * authenticate and get only what the block permits (null: open to any client). `tls`: clients
   * must use TLS (null: plain).
   */
  static async start(size = 3, binary = 'nats-server', auth: LocalNatsAuth | null = null, tls: LocalNatsTls | null = null): Promise<LocalNatsCluster> {
    for (let attempt = 1; ; attempt++) {
      const c = new LocalNatsCluster(fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-nats-')), binary, auth, tls);
      try {
        for (let i = 0; i < size; i++) {
          c.nodes.push({
            name: `n${i + 1}`, client_port: await freePort(), cluster_port: await freePort(), monitor_port: await freePort(), proc: null, log: '',
          });
        }
        await Promise.all(c.nodes.map((_, i) => c.startNode(i)));
        await c.waitForJetStream();
        return c;
      } catch (e) {
        await c.stop();
        if (attempt >= START_ATTEMPTS_MAX || !/address already in use/.test(String(e))) throw e;
      }
    }
  }

  /** Client URLs of every node (clients list them all and fail over between them). */
  urls(): string[] {
    return this.nodes.map((n) => `nats://127.0.0.1:${n.client_port}`);
  }

  private config(i: number): string {
    const n = this.nodes[i];
    const routes = this.nodes.filter((_, k) => k !== i).map((o) => `nats-route://127.0.0.1:${o.cluster_port}`);
    const store = path.join(this.dir, n.name);
    return [
      `server_name: ${n.name}`,
      `listen: 127.0.0.1:${n.client_port}`,
      `http: 127.0.0.1:${n.monitor_port}`,
      `max_payload: ${LOG_MESSAGE_BYTES_MAX}`,
      // Clients hold the connection while a large batch message is written.
      `max_pending: ${LOG_MESSAGE_BYTES_MAX * 4}`,
      `jetstream { store_dir: "${store}", max_memory_store: 64MB, max_file_store: 2GB }`,
      // One node is a standalone server (a JetStream cluster needs routes): R1 streams only.
      ...(this.nodes.length === 1 ? [] : [`cluster { name: ringbook, listen: 127.0.0.1:${n.cluster_port}, routes: [${routes.join(', ')}] }`]),
      ...(this.auth === null ? [] : [this.auth.authorization]),
      ...(this.tls === null ? [] : [this.tlsBlock(this.tls)]),
    ].join('\n') + '\n';
  }

  private tlsBlock(t: LocalNatsTls): string {
    const items = [
      `cert_file: ${JSON.stringify(t.cert_file)}`, `key_file: ${JSON.stringify(t.key_file)}`,
      ...(t.ca_file === undefined ? [] : [`ca_file: ${JSON.stringify(t.ca_file)}`]),
      ...(t.verify === true ? ['verify: true'] : []),
    ];
    return `tls { ${items.join(', ')} }`;
  }

  /**
   * Starts killed node `i` again on its ports with its store (it catches up from its peers): its
   * peers route to its cluster port and clients were given its client port, so those two stay.
   * Another process may have taken one of its ports meanwhile (the kernel hands a free port to
   * anyone); then the start is tried again RESTART_WAIT_MS later, at most RESTART_ATTEMPTS_MAX
   * times, and then it fails saying which ports. The monitoring port is this class's alone (only
   * metaLeader reads it): when it is the one taken, the node takes a fresh one at once.
   */
  async restart(i: number): Promise<void> {
    const n = this.nodes[i];
    if (n.proc !== null) throw new Error(`nats-server ${n.name} is running: kill it first`);
    const first_ms = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startNode(i);
        return;
      } catch (e) {
        const proc = n.proc as ChildProcess | null;
        if (proc !== null) await stopChild(proc, 'SIGKILL', 0);
        n.proc = null;
        const why = String(e);
        if (!PORT_IN_USE.test(why)) throw e;
        const monitor = /monitor port/.test(why);
        if (monitor) n.monitor_port = await freePort();
        if (attempt >= RESTART_ATTEMPTS_MAX) {
          throw new Error(`nats-server ${n.name} could not restart on its ports (client ${n.client_port}, cluster ${n.cluster_port}, ` +
            `monitor ${n.monitor_port}): another process holds one, ${attempt} attempts over ${Date.now() - first_ms} ms; ` +
            `the last: ${why}`, { cause: e });
        }
        if (!monitor) await new Promise((r) => setTimeout(r, RESTART_WAIT_MS));
      }
    }
  }

  /**
   * Starts node `i` on its ports and waits until it listens for clients and routes. Its own log
   * says so, not a connection to the port alone: another process holding the client port would
   * accept that connection while nats-server exits (the bind failure, `address already in use`).
   */
  private async startNode(i: number): Promise<void> {
    const n = this.nodes[i];
    const file = path.join(this.dir, `${n.name}.conf`);
    fs.writeFileSync(file, this.config(i));
    const env = this.auth === null ? process.env : { ...process.env, ...this.auth.env };
    const proc = spawn(this.binary, ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'], env });
    n.proc = proc;
    n.log = ''; // this run's: a restart must not read the last run's "Listening" lines
    const keep = (d: Buffer): void => {
      n.log = (n.log + d.toString('utf8')).slice(-20_000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const deadline = Date.now() + NODE_START_MS_MAX;
    const listening = [
      `Listening for client connections on 127.0.0.1:${n.client_port}`,
      ...(this.nodes.length === 1 ? [] : [`Listening for route connections on 127.0.0.1:${n.cluster_port}`]),
    ];
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(`nats-server ${n.name} exited (${proc.exitCode ?? proc.signalCode}): ${n.log.slice(-2000)}`);
      }
      if (listening.every((l) => n.log.includes(l)) && await portOpen(n.client_port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server ${n.name} did not listen on ${n.client_port} within ${NODE_START_MS_MAX} ms: ${n.log.slice(-2000)}`);
  }

  /** Waits until the cluster answers JetStream requests (its meta leader is elected). */
  async waitForJetStream(): Promise<void> {
    const nc = await connect({ servers: this.urls(), ...(this.auth?.client ?? {}), ...(this.tls === null ? {} : { tls: this.tls.client }) });
    try {
      await jetStreamReady(nc, JETSTREAM_READY_MS_MAX);
    } finally {
      await nc.close();
    }
  }

  /**
   * The index of the node leading the JetStream meta layer (stream and consumer creation, the
   * placement of new assets), as a live node's GET /jsz reports it; null when none answers one.
   */
  async metaLeader(): Promise<number | null> {
    for (const n of this.nodes) {
      if (n.proc === null) continue;
      try {
        const r = await fetch(`http://127.0.0.1:${n.monitor_port}/jsz`, { signal: AbortSignal.timeout(1000) });
        const leader = ((await r.json()) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader;
        const i = this.nodes.findIndex((x) => x.name === leader);
        if (i >= 0) return i;
      } catch {
        // this node is busy or electing: ask the next
      }
    }
    return null;
  }

  /** kill -9 node `i` (a machine that dies). */
  async kill(i: number): Promise<void> {
    const proc = this.nodes[i].proc;
    if (proc === null) return;
    await stopChild(proc, 'SIGKILL', 0);
    this.nodes[i].proc = null;
  }

  /** Stops every node and removes the directory. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map(async (n) => {
      if (n.proc === null) return;
      await stopChild(n.proc, 'SIGTERM', NODE_STOP_MS_MAX);
      n.proc = null;
    }));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
