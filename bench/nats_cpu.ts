// CPU time of a local test cluster's nats-server processes, for the cluster benches' per-message
// costs (bench/log_read.ts, bench/request_purge.ts).
import fs from 'node:fs';
import type { LocalNatsCluster } from '../src/cluster/local_nats.js';

/** /proc's clock tick (USER_HZ, 100 on Linux): utime and stime count in these. */
const PROC_TICK_US = 10_000;

/** CPU time of the nats-server processes (utime + stime from /proc/<pid>/stat), in µs. */
export function natsServersCpuUs(cluster: LocalNatsCluster): number {
  let ticks = 0;
  for (const n of cluster.nodes) {
    const pid = n.proc?.pid;
    if (pid === undefined) continue;
    // Fields after the command name (which may hold spaces): utime and stime are the 14th and
    // 15th overall, the 12th and 13th after it.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * PROC_TICK_US;
}
