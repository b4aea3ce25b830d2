// A config key the reader does not know stops the start, named with its full path and the known
// key it probably meant: a misspelt limit (`verify.task_item_max`) used to be ignored without a
// word, leaving the operator believing it was set. The known keys are the ones validateConfig reads
// (src/util/config_keys.ts), so these tests take the sections from what the config reads, not a list.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfigPath, loadConfig, mergeConfig } from '../../src/config/load.js';
import { validateConfig } from '../../src/config/read.js';
import { ConfigError } from '../../src/config/checks.js';
import { HIGH_RATE_LIMITS, REPO_ROOT, runScript, runVerifier, startServer } from '../server/harness.js';

const defaults = JSON.parse(fs.readFileSync(defaultConfigPath(), 'utf8')) as Record<string, unknown>;
const withOverride = (over: Record<string, unknown>): unknown => mergeConfig(defaults, over);

/** The config's sections: what validateConfig gives, less the three set from the environment only. */
const ENV_ONLY = new Set(['admin_token', 'operator_key', 'clock_offset_ms']);
const SECTIONS = Object.keys(loadConfig({})).filter((k) => !ENV_ONLY.has(k));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-unknown-keys-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, content: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('unknown config keys', () => {
  it('the sections are all there (the list is what the config reads)', () => {
    expect(SECTIONS).toEqual(expect.arrayContaining(['server', 'assets', 'markets', 'limits', 'verify', 'matcher', 'threads', 'settlement', 'log']));
    expect(SECTIONS.length).toBeGreaterThanOrEqual(19);
  });

  // An object section gets the bogus key beside its own keys; an array section (assets, markets)
  // in its first element.
  it.each(SECTIONS)('refuses an unknown key in section %s, naming its path', (section) => {
    const present = defaults[section];
    const over = Array.isArray(present)
      ? { [section]: present.map((e, i) => (i === 0 ? { ...(e as object), zzz_bogus: 1 } : e)) }
      : { [section]: { zzz_bogus: 1 } };
    const at = Array.isArray(present) ? `${section}[0].zzz_bogus` : `${section}.zzz_bogus`;
    expect(() => validateConfig(withOverride(over))).toThrow(new ConfigError(`config: unknown key ${at}`));
  });

  it.each([
    // The operator's misspellings: the nearest known key in the same section is offered.
    [{ verify: { task_item_max: 16 } }, 'unknown key verify.task_item_max (did you mean verify.task_items_max?)'],
    [{ matcher: { cpus: 1 } }, 'unknown key matcher.cpus (did you mean matcher.cpu?)'],
    [{ server: { hots: '127.0.0.1' } }, 'unknown key server.hots (did you mean server.host?)'],
    [{ limits: { ws_idle_timout_ms: 1000 } }, 'unknown key limits.ws_idle_timout_ms (did you mean limits.ws_idle_timeout_ms?)'],
    [{ rate_limits: { orders_per_walet: 5 } }, 'unknown key rate_limits.orders_per_walet (did you mean rate_limits.orders_per_wallet?)'],
    // A word left out, when one key there has it; `ws` is a word of many limits: no guess.
    [{ markets: [{ ...(defaults.markets as object[])[0], lot: 100 }, (defaults.markets as object[])[1]] }, 'unknown key markets[0].lot (did you mean markets[0].lot_size?)'],
    [{ limits: { ws: 1 } }, 'unknown key limits.ws'],
    // Nothing close: refused without a guess (orders_open_max is 6 edits away).
    [{ limits: { order_max: 10 } }, 'unknown key limits.order_max'],
    // In the wrong section: the same name where it belongs, also for a section the file leaves out.
    [{ limits: { steal_after_us: 50 } }, 'unknown key limits.steal_after_us (did you mean verify.steal_after_us?)'],
    // Top level: a misspelt section, and a section's key written without its section.
    [{ limit: { accounts_max: 10 } }, 'unknown key limit (did you mean limits?)'],
    [{ task_items_max: 16 }, 'unknown key task_items_max (did you mean verify.task_items_max?)'],
    [{ colour: 'red' }, 'unknown key colour'],
    // Set from the environment only: a file's value used to be ignored.
    [{ admin_token: 'secret' }, 'unknown key admin_token'],
    // Nested below a section.
    [{ threads: { background: { nice: 5, polcy: 'idle' } } }, 'unknown key threads.background.polcy (did you mean threads.background.policy?)'],
    // Case is a misspelling too.
    [{ snapshots: { Keep: 2 } }, 'unknown key snapshots.Keep (did you mean snapshots.keep?)'],
  ])('refuses %j', (over, message) => {
    expect(() => validateConfig(withOverride(over))).toThrow(new ConfigError(`config: ${message}`));
  });

  it('names every unknown key at once, in the config\'s order, and a known key misspelt beside its right spelling', () => {
    const over = { verify: { task_items_max: 8, task_item_max: 16 }, markets: [{ ...(defaults.markets as object[])[0], tick: 5 }, (defaults.markets as object[])[1]], zzz: 1 };
    expect(() => validateConfig(withOverride(over))).toThrow(new ConfigError(
      'config: unknown key markets[0].tick (did you mean markets[0].tick_size?); unknown key verify.task_item_max (did you mean verify.task_items_max?); unknown key zzz'));
  });

  it('a value error is still reported as before (the key is known)', () => {
    expect(() => validateConfig(withOverride({ verify: { task_items_max: 0 } }))).toThrow('config: verify.task_items_max must be an integer in 1..');
  });

  it('a value error beside an unknown key is reported alone: the reading stopped there, so no key it had not reached is called unknown', () => {
    // assets is read before verify and markets: with a bad asset, verify.task_items_max (valid) was
    // never asked for; an unknown-key list made then would name it.
    const assets = (defaults.assets as Record<string, unknown>[]).map((a, i) => (i === 0 ? { ...a, onchain_decimals: 99 } : a));
    let message = '';
    try {
      validateConfig(withOverride({ assets, verify: { task_items_max: 8, task_item_max: 16 } }));
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^config: \S+\.onchain_decimals must be 6\.\.36$/);
    // With the value fixed, the unknown key is named.
    expect(() => validateConfig(withOverride({ verify: { task_items_max: 8, task_item_max: 16 } })))
      .toThrow(new ConfigError('config: unknown key verify.task_item_max (did you mean verify.task_items_max?)'));
  });

  it('refuses "__proto__" in a merged file as an unknown key, changing no prototype', () => {
    const merged = mergeConfig(defaults, JSON.parse('{"__proto__":{"polluted":true},"fees":{"maker_fee_bps":0,"taker_fee_bps":3}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(() => validateConfig(merged)).toThrow(new ConfigError('config: unknown key __proto__'));
    expect(() => validateConfig(withOverride(JSON.parse('{"limits":{"__proto__":{"accounts_max":1}}}')))).toThrow(new ConfigError('config: unknown key limits.__proto__'));
  });

  it('loads the embedded defaults, a config with every section written out, and the config files in the repo', () => {
    expect(() => loadConfig({})).not.toThrow();
    // Every section and key the server reads, written out with the values it runs on.
    const c = loadConfig({});
    const full = {
      ...defaults,
      limits: c.limits, verify: c.verify, matcher: c.matcher, threads: c.threads, diagnostics: c.diagnostics,
      force_inclusion: c.force_inclusion, server: { ...(defaults.server as object), health_port: null },
    };
    expect(validateConfig(full).verify).toEqual(c.verify);
    const files = ['config', 'examples'].flatMap((d) => {
      const at = path.join(REPO_ROOT, d);
      return fs.existsSync(at) ? fs.readdirSync(at, { recursive: true }).map(String).filter((f) => f.endsWith('.json')).map((f) => path.join(at, f)) : [];
    });
    expect(files).toContain(defaultConfigPath());
    for (const file of files) expect(() => loadConfig({ RINGBOOK_CONFIG: file })).not.toThrow();
    // The test harness's own config (merged over the defaults for every server test).
    expect(() => validateConfig(withOverride({ rate_limits: HIGH_RATE_LIMITS, metrics: { port: 0 } }))).not.toThrow();
  });

  it('every section.key docs/operations.md and docs/scale-out.md name is a key the config knows', () => {
    const named = new Set<string>();
    for (const doc of ['operations.md', 'scale-out.md']) {
      const text = fs.readFileSync(path.join(REPO_ROOT, 'docs', doc), 'utf8');
      for (const m of text.matchAll(/`([a-z_]+)\.([a-z_]+)(?:\.[a-z_]+)*[`:= ]/g)) if (SECTIONS.includes(m[1])) named.add(`${m[1]}.${m[2]}`);
    }
    expect(named.size).toBeGreaterThan(20);
    for (const key of named) {
      const [section, leaf] = key.split('.');
      // A known key with a value it refuses fails on the value; only an unknown one says "unknown key".
      let message = '';
      try {
        validateConfig(withOverride({ [section]: { [leaf]: { zzz_not_a_value: true } } }));
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, key).not.toMatch(new RegExp(`unknown key ${key.replace('.', '\\.')}( |;|$)`));
    }
  });

  it('the CLI readers of the config refuse it the same way (verify --config, replay with RINGBOOK_CONFIG)', async () => {
    const bad = configFile('cli.json', { verify: { task_item_max: 16 } });
    const message = 'config: unknown key verify.task_item_max (did you mean verify.task_items_max?)';
    const verify = await runVerifier('http://127.0.0.1:1', bad, ['--out', path.join(dir, 'verify-out')]);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toContain(message);
    const replay = await runScript('src/cli/ringbook.js', ['replay'], { RINGBOOK_CONFIG: bad, RINGBOOK_DATA_DIR: path.join(dir, 'replay-data') });
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain(message);
    // A cluster role reads the same config before anything else (no NATS needed to be refused).
    const role = await runScript('src/main.js', ['--role', 'matcher'], { RINGBOOK_CONFIG: bad, RINGBOOK_DATA_DIR: path.join(dir, 'role-data') });
    expect(role.code).toBe(1);
    expect(role.stderr).toContain(message);
    // A cluster setting refused (no NATS URLs) leaves no data dir and no secret behind: on the old
    // code the role's data dir was made and given an admin_token and operator_key first.
    const role_data = path.join(dir, 'role-no-urls');
    const no_urls = await runScript('src/main.js', ['--role', 'matcher'],
      { RINGBOOK_DATA_DIR: role_data, RINGBOOK_NATS_URLS: '', RINGBOOK_ADMIN_TOKEN: '', RINGBOOK_OPERATOR_KEY: '' });
    expect(no_urls.code).toBe(1);
    expect(no_urls.stderr).toContain('the cluster roles need RINGBOOK_NATS_URLS');
    expect(fs.existsSync(role_data)).toBe(false);
  });

  it('the real server refuses to start on a misspelt key: exit code 1, the message on stderr', async () => {
    const started = startServer({ config: { limits: { orders_open_per_acount_max: 5 } } });
    await expect(started).rejects.toThrow(
      /server exited \(code 1, signal null\) before listening\.\nstderr:\n[^\n]*config: unknown key limits\.orders_open_per_acount_max \(did you mean limits\.orders_open_per_account_max\?\)[\s\S]*\nstdout:\n$/);
  });
});
