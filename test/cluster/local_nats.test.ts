// LocalNatsCluster's restart of a killed node (src/cluster/local_nats.ts restart()) when another
// process took one of its ports meanwhile: retried a bounded number of times, then a clear
// failure; a port freed during the retries is taken back; a taken monitoring port is replaced.
// Real nats-server processes on loopback; the "other process" is a listener of this one.
import net from 'node:net';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalNatsCluster } from '../../src/cluster/local_nats.js';

/** A bounded poll of a node's log (a safety limit: a failed attempt shows within one start). */
const LOG_POLL_MS = 10;
const LOG_POLLS_MAX = 1_000;

/** Listens on `port` (loopback) as another process would; resolves once bound. */
function holdPort(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer((sock) => sock.destroy());
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

function release(s: net.Server): Promise<void> {
  return new Promise((resolve) => s.close(() => resolve()));
}

/** A client connected to node `i` alone answers a round trip: the restarted node is a NATS server again. */
async function nodeServes(nats: LocalNatsCluster, i: number): Promise<void> {
  const nc = await connect({ servers: [nats.urls()[i]], reconnect: false });
  try {
    await nc.flush();
    expect(nc.info?.server_name).toBe(nats.nodes[i].name);
  } finally {
    await nc.close();
  }
}

describe('LocalNatsCluster restart of a killed node whose port was taken', () => {
  let nats: LocalNatsCluster;
  beforeAll(async () => {
    nats = await LocalNatsCluster.start(3);
  }, 60_000);
  afterAll(async () => {
    await nats?.stop();
  });

  it('its client port held by another process: fails after its bounded retries, saying which ports; restarts once the port is free', async () => {
    await nats.kill(1);
    const n = nats.nodes[1];
    const holder = await holdPort(n.client_port);
    try {
      await expect(nats.restart(1)).rejects.toThrow(
        new RegExp(`^nats-server n2 could not restart on its ports \\(client ${n.client_port}, cluster ${n.cluster_port}, monitor \\d+\\): another process holds one, 5 attempts over \\d+ ms; the last: .*address already in use`, 's'),
      );
      // Bounded by its count of attempts (5, in the message above), not asserted on the clock.
      expect(n.proc).toBeNull(); // reads as killed: no stray process
    } finally {
      await release(holder);
    }
    await nats.restart(1);
    await nodeServes(nats, 1);
    await nats.waitForJetStream();
  }, 60_000);

  it('its cluster port freed during the retries: the restart takes it back (same ports)', async () => {
    await nats.kill(2);
    const n = nats.nodes[2];
    const ports = [n.client_port, n.cluster_port, n.monitor_port];
    const holder = await holdPort(n.cluster_port);
    // Freed once an attempt has failed on it (its log says so), not after a guessed 700 ms: the
    // restart then provably waited for the port instead of starting around it.
    let failed_attempt_seen = false;
    const freed = (async () => {
      for (let i = 0; i < LOG_POLLS_MAX && !/address already in use/.test(n.log); i++) await new Promise((r) => setTimeout(r, LOG_POLL_MS));
      failed_attempt_seen = /address already in use/.test(n.log);
      await release(holder);
    })();
    await nats.restart(2);
    await freed;
    expect(failed_attempt_seen, 'an attempt failed on the held cluster port before it was freed').toBe(true);
    expect([n.client_port, n.cluster_port, n.monitor_port]).toEqual(ports);
    expect(n.log).toContain(`Listening for route connections on 127.0.0.1:${n.cluster_port}`);
    await nodeServes(nats, 2);
  }, 60_000);

  it('its monitoring port taken: the node takes a fresh one at once (nobody else was told it), and metaLeader reads it', async () => {
    await nats.kill(0);
    const n = nats.nodes[0];
    const old_monitor = n.monitor_port;
    const holder = await holdPort(old_monitor);
    try {
      await nats.restart(0);
      expect(n.monitor_port).not.toBe(old_monitor);
      await nodeServes(nats, 0);
      const r = await fetch(`http://127.0.0.1:${n.monitor_port}/varz`);
      expect(((await r.json()) as { server_name: string }).server_name).toBe('n1');
    } finally {
      await release(holder);
    }
    await nats.waitForJetStream();
    expect(await nats.metaLeader()).not.toBeNull();
  }, 60_000);

  it('a running node is not restarted', async () => {
    await expect(nats.restart(0)).rejects.toThrow(/nats-server n1 is running: kill it first/);
  });
});
