// `make run`: the Ringbook server on its embedded defaults (config/default.json + RINGBOOK_* env).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, ConfigError } from './config.js';
import { RingbookServer } from './gateway/server.js';
import { clusterSettings, roleOf, startGateway, startMatcher, type RunningRole } from './cluster/roles.js';

/** A secret from the environment, else from the data dir, else generated and kept there. */
function secret(data_dir: string, file: string, from_env: string | null, make: () => string): { value: string; generated: boolean } {
  if (from_env) return { value: from_env, generated: false };
  const p = path.join(data_dir, file);
  if (existsSync(p)) return { value: readFileSync(p, 'utf8').trim(), generated: false };
  const value = make();
  writeFileSync(p, value + '\n', { mode: 0o600 });
  return { value, generated: true };
}

async function main(): Promise<void> {
  const cfg = loadConfig();
  const data_dir = path.resolve(cfg.server.data_dir);
  mkdirSync(data_dir, { recursive: true });
  const admin = secret(data_dir, 'admin_token', cfg.admin_token, () => randomBytes(24).toString('hex'));
  const operator = secret(data_dir, 'operator_key', cfg.operator_key, () => '0x' + randomBytes(32).toString('hex'));
  // A cluster role (docs/scale-out.md), else the single process.
  const role = roleOf(process.argv, process.env);
  let server: RunningRole;
  if (role === null) {
    const single = new RingbookServer({ cfg, admin_token: admin.value, operator_key: operator.value });
    server = { port: await single.start(), stop: () => single.stop() };
  } else {
    const settings = clusterSettings(role);
    server = role === 'gateway'
      ? await startGateway(cfg, settings, { admin_token: admin.value, operator_key: operator.value })
      : await startMatcher(cfg, settings);
    console.log(`ringbook: ${role} ${settings.node_id} on NATS ${settings.nats_urls.join(',')}`);
  }
  const port = server.port;
  console.log(`ringbook: listening on http://${cfg.server.host}:${port} (data dir ${data_dir})`);
  if (!cfg.admin_token) {
    console.log(`ringbook: admin token ${admin.generated ? 'generated' : 'read'} at ${path.join(data_dir, 'admin_token')}: ${admin.value}`);
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`ringbook: ${signal}: finishing in-flight requests`);
    server.stop().then(() => {
      console.log('ringbook: stopped cleanly');
      process.exit(0);
    }, (e: unknown) => {
      console.error('ringbook: unclean stop:', e);
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e: unknown) => {
  console.error(e instanceof ConfigError ? e.message : e);
  process.exit(1);
});
