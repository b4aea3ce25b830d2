// The start-up hint (src/journal/fs_hint.ts): /proc/self/mountinfo lines parsed, the data dir's
// mount found (longest prefix, later mounts shadow earlier ones, escapes decoded), and the warning
// given only for ext4 whose device has no /proc/fs/jbd2 entry.
import { describe, expect, it } from 'vitest';
import { dataDirFsWarning, mountOf, parseMountinfo, type FsProbe } from '../../src/journal/fs_hint.js';

// Lines as this VM's kernel (6.18) writes them, plus a journaled loop mount and an escaped path.
const MOUNTINFO = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534',
  '25 24 0:23 / /dev/shm rw,relatime shared:5 master:1 - tmpfs tmpfs rw,size=24684092k',
  '42 27 7:0 / /srv/data rw,relatime - ext4 /dev/loop0 rw',
  '43 27 7:1 / /srv/my\\040disk rw,relatime,lazytime - ext4 /dev/loop1 rw',
  '44 27 0:40 / /srv/data/tmp rw,relatime - tmpfs tmpfs rw',
  'garbage line',
  '',
].join('\n');

function probe(jbd2: string[]): FsProbe {
  const names: Record<string, string> = { '254:0': 'vda', '7:0': 'loop0', '7:1': 'loop1' };
  return {
    realpath: (p) => p,
    mountinfo: () => MOUNTINFO,
    blockDeviceName: (dev) => names[dev],
    jbd2Entries: () => jbd2,
  };
}

describe('parseMountinfo', () => {
  it('reads device, mount point, type and source; skips malformed lines', () => {
    const e = parseMountinfo(MOUNTINFO);
    expect(e).toHaveLength(6);
    expect(e[1]).toEqual({ dev: '254:0', mount_point: '/', fs_type: 'ext4', source: '/dev/vda' });
    // optional fields ("shared:5 master:1") before the separator
    expect(e[2]).toMatchObject({ mount_point: '/dev/shm', fs_type: 'tmpfs' });
    expect(e[4].mount_point).toBe('/srv/my disk');
  });
});

describe('mountOf', () => {
  const e = parseMountinfo(MOUNTINFO);
  it('takes the longest mount point that is a path prefix', () => {
    expect(mountOf(e, '/srv/data/journal')?.source).toBe('/dev/loop0');
    expect(mountOf(e, '/srv/data')?.source).toBe('/dev/loop0');
    expect(mountOf(e, '/srv/data/tmp/x')?.fs_type).toBe('tmpfs');
    expect(mountOf(e, '/srv/database')?.source).toBe('/dev/vda'); // not under /srv/data
    expect(mountOf(e, '/srv/my disk/j')?.source).toBe('/dev/loop1');
  });
  it('a later mount on the same point shadows the earlier one', () => {
    const two = parseMountinfo(MOUNTINFO + '\n50 27 0:41 / /srv/data rw - xfs /dev/vdb rw');
    expect(mountOf(two, '/srv/data/j')?.fs_type).toBe('xfs');
  });
});

describe('dataDirFsWarning', () => {
  it('warns for ext4 without a jbd2 entry, with or without lazytime', () => {
    expect(dataDirFsWarning('/var/lib/ringbook', probe(['loop0-8']))).toContain('/dev/vda');
    expect(dataDirFsWarning('/srv/my disk/j', probe(['vda-8', 'loop0-8']))).toContain('without a journal');
  });
  it('says nothing for a journaled ext4, another file system, or an unreadable system', () => {
    expect(dataDirFsWarning('/srv/data/j', probe(['loop0-8']))).toBeNull();
    expect(dataDirFsWarning('/srv/data/tmp/j', probe([]))).toBeNull();
    expect(dataDirFsWarning('/proc/x', probe([]))).toBeNull();
    const broken: FsProbe = { ...probe([]), mountinfo: () => { throw new Error('ENOENT'); } };
    expect(dataDirFsWarning('/srv/data', broken)).toBeNull();
  });
  it('does not take loop1-8 for loop10 (device name then a dash)', () => {
    const p = { ...probe(['loop1-8']), blockDeviceName: () => 'loop10' };
    expect(dataDirFsWarning('/srv/data', p)).not.toBeNull();
  });
});
