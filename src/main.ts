// `make run`: the Ringbook server on its embedded defaults (config/default.json + RINGBOOK_* env).
// `--pretty`: human-readable log lines instead of JSON (as config log.pretty).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from './config/load.js';
import { ConfigError } from './config/checks.js';
import { RingbookServer } from './gateway/server.js';
import { nativeFutex } from './util/futex.js';
import { nativeLoopBell } from './util/loop_bell.js';
import { defaultRecovererInstance } from './auth/recover.js';
import { componentLog, configureLogs } from './util/log.js';
import { THREAD_NAMES } from './util/thread_name.js';
import { applyThreadSlice } from './util/thread_slice.js';
import { startThreadPlacement } from './util/thread_placement.js';
import { dataDirFsWarning } from './journal/fs_hint.js';
import { DataDirInUse, refuseIncompleteBackup } from './journal/data_dir_lock.js';
import { findSecret, StartClaim } from './journal/start_claim.js';

const log = componentLog('server');
import { checkRoleConfig, clusterSettings, roleOf, roleStoreDir, startDa, startGateway, startMatcher, type RunningRole } from './cluster/roles.js';

/**
 * What this start writes into the data dir until it has started (src/journal/start_claim.ts): a
 * failed start removes it again (forget), a started one keeps it (succeeded).
 */
const claim = new StartClaim();

/**
 * What a single-process start makes in its data dir (RingbookServer.start: the journal, the DA
 * store, the snapshots' directory), removed if the start fails on a data dir that held nothing.
 * Before 2026-11-29 a failed first start (a port in use) left them: a journal no server ever
 * served from, in a data dir the operator had not made.
 */
const START_MADE_PARTS: readonly string[] = ['journal', 'da', 'snapshots'];
const singlePart = (name: string): boolean => START_MADE_PARTS.includes(name);
/** A cluster role's store directory (roleStoreDir) that held nothing: all it holds is the start's. */
const rolePart = (): boolean => true;

async function main(): Promise<void> {
  const cfg = loadConfig();
  if (process.argv.includes('--pretty')) cfg.log.pretty = true;
  configureLogs(cfg.log);
  // RINGBOOK_RING_FUTEX=native or RINGBOOK_LOOP_BELL=native without a module this process can
  // load, or RINGBOOK_SECP256K1=system|npm without that library: one clear line now rather than a
  // stack from the first ring made or the first signature checked.
  try {
    nativeFutex();
    nativeLoopBell();
    defaultRecovererInstance();
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  // A cluster role (docs/scale-out.md), else the single process: a bad role or cluster setting
  // refuses the start here, before the data dir is made or written.
  const role = roleOf(process.argv, process.env);
  const settings = role === null ? null : clusterSettings(role);
  if (role !== null && settings !== null) checkRoleConfig(role, settings, cfg);
  const data_dir = path.resolve(cfg.server.data_dir);
  claim.mkdir(data_dir);
  const fs_warning = dataDirFsWarning(data_dir);
  if (fs_warning !== null) log.warn(`ringbook: ${fs_warning}`, { data_dir });
  // Read or made now, written (claim.keepSecret) only once the start is past its refusals.
  const admin_found = findSecret(data_dir, 'admin_token', cfg.admin_token, () => randomBytes(24).toString('hex'));
  const operator_found = findSecret(data_dir, 'operator_key', cfg.operator_key, () => '0x' + randomBytes(32).toString('hex'));
  // Signals are taken from here on, before the start: a SIGTERM while the journal is recovered
  // or the verify workers load (up to VERIFY_WORKERS_START_WAIT_MS, 10 s) ends the start cleanly
  // (the server does not listen and stops like a running one) instead of killing the process
  // half started. A second one during the start exits at once (a start that hangs).
  // (`as`: the closures below assign them, which TypeScript's narrowing of a `let` would not see.)
  let server = null as (RunningRole & { toggleMetricsRecording?: () => boolean | null }) | null;
  let stop_signal = null as string | null;
  const start_abort = new AbortController();
  const stopServer = (running: RunningRole, signal: string): void => {
    log.info(`ringbook: ${signal}: finishing in-flight requests`);
    running.stop().then(() => {
      log.info('ringbook: stopped cleanly');
      process.exit(0);
    }, (e: unknown) => {
      log.fatal('ringbook: unclean stop', e);
      process.exit(1);
    });
  };
  const stop = (signal: string): void => {
    if (stop_signal !== null) {
      if (server === null) {
        log.warn(`ringbook: ${signal} again during the start: exiting now, without a clean stop`);
        process.exit(1);
      }
      return;
    }
    stop_signal = signal;
    if (server === null) {
      log.info(`ringbook: ${signal} during the start: stopping cleanly once the threads are up, without listening`);
      start_abort.abort();
    } else {
      stopServer(server, signal);
    }
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGUSR2: request-path metrics recording off/on (single process; docs/operations.md).
  process.on('SIGUSR2', () => void server?.toggleMetricsRecording?.());
  // What Node would print on stderr and exit 1 for, as one JSON line (the exit stays the same).
  process.on('uncaughtException', (e) => {
    log.fatal('ringbook: uncaught exception', e);
    claim.forget(); // nothing once started
    process.exit(1);
  });
  let running: RunningRole & { toggleMetricsRecording?: () => boolean | null };
  let health_port: number | null = null;
  // Before anything opens the journal or a store (or a secret is written): a start on an
  // incomplete backup, or a second server (a second matcher, DA role) on this data dir, stops here.
  // `ringbook backup` marks the top of its copy (src/cli/backup.ts markIncomplete): every role
  // checks there, not only in its own directory (before 2026-11-29 a role checked only that one,
  // and started on half a copy); the lock checks the directory it takes.
  refuseIncompleteBackup(data_dir);
  const store_dir = role === null ? data_dir : roleStoreDir(role, data_dir, settings?.gateway_state_roots);
  if (store_dir !== null) {
    claim.mkdir(store_dir);
    claim.lock(store_dir, role === null ? singlePart : rolePart);
  }
  // Only the secrets this start uses go into the data dir: a matcher role uses neither, a DA role
  // only the operator key (before 2026-11-29 every role wrote both, and a matcher's start logged an
  // admin token nobody could use with it).
  const uses_admin_token = role === null || role === 'gateway';
  const admin = uses_admin_token ? claim.keepSecret(admin_found) : admin_found;
  const operator = role === 'matcher' ? operator_found : claim.keepSecret(operator_found);
  if (role === null || settings === null) {
    const single = new RingbookServer({ cfg, admin_token: admin.value, operator_key: operator.value });
    running = { port: await single.start(start_abort.signal), stop: () => single.stop(), toggleMetricsRecording: () => single.toggleMetricsRecording() };
    health_port = single.health_port;
  } else {
    if (role === 'gateway') running = await startGateway(cfg, settings, { admin_token: admin.value, operator_key: operator.value }, store_dir, start_abort.signal);
    else if (role === 'matcher') running = await startMatcher(cfg, settings, roleStoreDir(role, data_dir));
    else running = await startDa(cfg, settings, { operator_key: operator.value }, roleStoreDir(role, data_dir));
    health_port = running.health_port ?? null;
    log.info(`ringbook: ${role} ${settings.node_id} on NATS ${settings.nats_urls.join(',')}`, { role });
  }
  server = running;
  claim.succeeded();
  // The matcher thread's EEVDF slice (config threads.matcher_slice_us): set from this thread by the
  // matcher's kernel thread id (found by its name, which it sets first thing), since a thread may
  // set any thread of its own process; the matcher's own start is left as it is. Logged, never
  // thrown; a process without a matcher thread (a cluster gateway) logs that it has none.
  applyThreadSlice('matcher', THREAD_NAMES.matcher, cfg.threads.matcher_slice_us, 'threads.matcher_slice_us');
  // After the threads exist (the matcher found by its name, as above); later threads are placed by the next sweep.
  startThreadPlacement(cfg.threads.pipeline_cpu);
  if (stop_signal !== null) {
    stopServer(running, stop_signal);
    return;
  }
  if (health_port !== null) log.info(`ringbook: health checks on http://${cfg.server.host}:${health_port}/health`, { health_port });
  const port = running.port;
  log.info(`ringbook: listening on http://${cfg.server.host}:${port} (data dir ${data_dir})`, { port, data_dir });
  if (!cfg.admin_token && uses_admin_token) {
    log.info(`ringbook: admin token ${admin.generated ? 'generated' : 'read'} at ${path.join(data_dir, 'admin_token')}: ${admin.value}`);
  }
}

main().catch((e: unknown) => {
  claim.forget();
  if (e instanceof ConfigError || e instanceof DataDirInUse) log.fatal(e.message);
  else log.fatal('ringbook: start failed', e);
  process.exit(1);
});
