// A cluster matcher's snapshots (<data>/matcher), a DA role's store (<data>/da) and a gateway's
// snapshots (<data>/gateway, since h31g) are one process's each (src/cluster/roles.ts,
// src/journal/data_dir_lock.ts): a second matcher, DA role or gateway
// started on the same data dir exits 1 naming the holder, before it connects to NATS or reads a
// snapshot or the store. Before, nothing stopped it (two matchers wrote one snapshot directory,
// two DA roles one LMDB store). The holder here is this test's process, which takes the lock as a
// running role does; the role's NATS URL is never reached (nothing listens on port 1).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir } from '../../src/journal/data_dir_lock.js';
import { REPO_ROOT, SERVER_MAIN } from '../server/harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmpDir = tempDirsPerFile('ringbook-role-lock-');
/** Bound on a refused role's run (it exits at start; a hang would be the bug). */
const ROLE_EXIT_MS_MAX = 30_000;

function startRole(role: 'matcher' | 'da' | 'gateway', data_dir: string): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [SERVER_MAIN], {
    cwd: REPO_ROOT, encoding: 'utf8', timeout: ROLE_EXIT_MS_MAX,
    env: { ...process.env, RINGBOOK_ROLE: role, RINGBOOK_DATA_DIR: data_dir, RINGBOOK_NATS_URLS: 'nats://127.0.0.1:1', RINGBOOK_PORT: '0' },
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('one cluster role per store directory', () => {
  const releases: (() => void)[] = [];
  afterAll(() => {
    for (const r of releases) r();
  });

  for (const [role, sub] of [['matcher', 'matcher'], ['da', 'da'], ['gateway', 'gateway']] as const) {
    it(`a ${role} role on a data dir whose ${sub}/ another process holds exits 1 naming it`, () => {
      const data_dir = tmpDir();
      const dir = path.join(data_dir, sub);
      fs.mkdirSync(dir, { recursive: true });
      releases.push(lockDataDir(dir));
      const r = startRole(role, data_dir);
      expect(r.out).toContain(`another server (pid ${process.pid}) runs on the data dir ${dir}`);
      expect(r.code).toBe(1);
    });
  }
});
