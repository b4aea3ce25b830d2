// The setting of the cluster settlement tests: a dev chain with Settlement deployed (dev_chain.ts)
// and a local NATS cluster (test/cluster/cluster_helpers.ts) whose first matcher leads from
// genesis. What a test starts here is stopped by `stopSettledClusters` (its afterAll).
import type { StartedServer } from '../server/harness.js';
import { leadingFromGenesis, startTestCluster, type TestCluster } from '../cluster/cluster_helpers.js';
import { devSettlement, settlementConfig, type DevChain, type DevSettlement } from './dev_chain.js';

export interface SettledCluster {
  dev: DevSettlement;
  /** The config's settlement section for the cluster's roles (settlementConfig). */
  settlement: { settlement: Record<string, unknown> };
  c: TestCluster;
  /** The first matcher, leading from genesis. */
  m1: StartedServer;
}

const chains: DevChain[] = [];
const clusters: TestCluster[] = [];

/** A dev chain funding `accounts`, a cluster and its leading matcher m1; the roles poll the chain every `poll_ms`. */
export async function startSettledCluster(accounts: string[], poll_ms: number): Promise<SettledCluster> {
  const dev = await devSettlement(accounts);
  chains.push(dev.chain);
  const c = await startTestCluster();
  clusters.push(c);
  const m1 = await c.startMatcher('m1');
  await leadingFromGenesis(m1);
  return { dev, settlement: settlementConfig(dev, poll_ms), c, m1 };
}

/** Stops every cluster, then every chain, started here. */
export async function stopSettledClusters(): Promise<void> {
  for (const c of clusters.splice(0)) await c.stop();
  for (const chain of chains.splice(0)) await chain.close();
}
