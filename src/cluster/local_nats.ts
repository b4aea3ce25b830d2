// A JetStream cluster of real `nats-server` processes on loopback ports in a temporary directory:
// what the cluster tests and bench/cluster.ts run against, and a quick way for an operator to try
// the cluster roles on one machine. Debian's nats-server (2.9) is enough: nothing here or in the
// roles needs a newer server (docs/scale-out.md, "NATS server version").
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { freePort } from '../util/free_port.js';
import { stopChild } from '../util/child_stop.js';
import { jetStreamReady, JETSTREAM_READY_MS_MAX, LOG_MESSAGE_BYTES_MAX } from './log_format.js';

/** How long one node may take to accept client connections. */
const NODE_START_MS_MAX = 10_000;
/** Cluster starts tried when a node could not bind a port handed out by freePort (taken in between). */
const START_ATTEMPTS_MAX = 3;
/** How long a clean stop may take before SIGKILL. */
const NODE_STOP_MS_MAX = 5_000;

export interface NatsNode {
  name: string;
  client_port: number;
  cluster_port: number;
  /** nats-server's monitoring port (loopback): GET /jsz says who leads the JetStream meta layer. */
  monitor_port: number;
  proc: ChildProcess | null;
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

  private constructor(dir: string, binary: string) {
    this.dir = dir;
    this.binary = binary;
  }

  /**
   * Starts `size` nodes (3 for R3 streams) and waits until each accepts clients. A port freePort
   * handed out can be taken before nats-server binds it (an outgoing connection's ephemeral port:
   * seen with two test files starting clusters at once, 2 of 9 runs); then the whole cluster is
   * started again on fresh ports, at most START_ATTEMPTS_MAX times.
   */
  static async start(size = 3, binary = 'nats-server'): Promise<LocalNatsCluster> {
    for (let attempt = 1; ; attempt++) {
      const c = new LocalNatsCluster(fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-nats-')), binary);
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
      `cluster { name: ringbook, listen: 127.0.0.1:${n.cluster_port}, routes: [${routes.join(', ')}] }`,
    ].join('\n') + '\n';
  }

  /** Starts node `i` (again, after kill: same ports, same store, it catches up from its peers). */
  async startNode(i: number): Promise<void> {
    const n = this.nodes[i];
    const file = path.join(this.dir, `${n.name}.conf`);
    fs.writeFileSync(file, this.config(i));
    const proc = spawn(this.binary, ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    n.proc = proc;
    const keep = (d: Buffer): void => {
      n.log = (n.log + d.toString('utf8')).slice(-20_000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const deadline = Date.now() + NODE_START_MS_MAX;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`nats-server ${n.name} exited (${proc.exitCode}): ${n.log.slice(-2000)}`);
      if (await portOpen(n.client_port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server ${n.name} did not listen on ${n.client_port} within ${NODE_START_MS_MAX} ms: ${n.log.slice(-2000)}`);
  }

  /** Waits until the cluster answers JetStream requests (its meta leader is elected). */
  async waitForJetStream(): Promise<void> {
    const nc = await connect({ servers: this.urls() });
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
