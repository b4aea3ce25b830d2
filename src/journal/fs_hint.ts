// A start-up hint for operators: is the data directory on ext4 without a journal?
//
// There, every durable write-ahead append (wal.ts: a page through an O_DSYNC descriptor) also
// writes the file's inode-table block whenever the mtime moved since the last one (each clock
// tick), one more synchronous device write in ~50-90% of the appends at a light load: 1.48 device
// writes + 1 flush per append instead of 1.01 + 1 with a journal (docs/benchmarks.md "h23m3").
// Mounting with `lazytime` does not avoid it (ext4 always keeps i_version, whose bump marks the
// inode dirty for fdatasync), so the hint asks for a journal, not for a mount option.
//
// How it tells: the mount holding the directory from /proc/self/mountinfo (longest mount point
// that is a path prefix; the later of equal ones, which shadows the earlier); if its type is
// ext4, the kernel name of its device from /sys/dev/block/<major:minor>; a mounted ext4 with a
// journal has a /proc/fs/jbd2/<name>-<journal inode> directory (`vda-8`). Anything unreadable
// (not Linux, no /proc, a container without /sys) gives no hint: this is advice, never an error.
import { readFileSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** One line of /proc/self/mountinfo, the fields the hint needs. */
export interface MountEntry {
  /** `major:minor` of the file system's device (field 3). */
  readonly dev: string;
  /** Where it is mounted, octal escapes (`\040` for a space) decoded. */
  readonly mount_point: string;
  readonly fs_type: string;
  readonly source: string;
}

/** `\040` -> ' ' etc.: how the kernel escapes space, tab, newline and backslash in mountinfo. */
function unescapeMountinfo(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Parses /proc/self/mountinfo text; malformed lines are skipped. */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    // id parent major:minor root mount_point options [optional fields...] - type source super_options
    const sep = fields.indexOf('-', 6);
    if (fields.length < 7 || sep < 0 || sep + 2 >= fields.length) continue;
    out.push({
      dev: fields[2],
      mount_point: unescapeMountinfo(fields[4]),
      fs_type: fields[sep + 1],
      source: unescapeMountinfo(fields[sep + 2]),
    });
  }
  return out;
}

/** The mount that holds the absolute, symlink-free path `dir`, or null if none matches. */
export function mountOf(entries: readonly MountEntry[], dir: string): MountEntry | null {
  let best: MountEntry | null = null;
  for (const e of entries) {
    const mp = e.mount_point;
    const inside = mp === '/' || dir === mp || dir.startsWith(mp.endsWith('/') ? mp : mp + '/');
    if (inside && (best === null || mp.length >= best.mount_point.length)) best = e;
  }
  return best;
}

/** What the hint needs from the running system; injected in tests. */
export interface FsProbe {
  /** The path with symlinks resolved (a data dir reached through a link is on the link's target). */
  realpath(p: string): string;
  mountinfo(): string;
  /** Kernel name of the block device `major:minor` (`vda`, `loop0`, `dm-0`). */
  blockDeviceName(dev: string): string;
  /** Entries of /proc/fs/jbd2 (one per mounted journal, `vda-8`). */
  jbd2Entries(): string[];
}

const linuxProbe: FsProbe = {
  realpath: (p) => realpathSync(p),
  mountinfo: () => readFileSync('/proc/self/mountinfo', 'utf8'),
  blockDeviceName: (dev) => path.basename(readlinkSync(`/sys/dev/block/${dev}`)),
  jbd2Entries: () => {
    try {
      return readdirSync('/proc/fs/jbd2');
    } catch {
      return []; // no journal mounted anywhere: jbd2 may not even be loaded
    }
  },
};

/**
 * A one-line warning when `data_dir` (absolute) is on ext4 without a journal, else null (also
 * when the system cannot be read).
 */
export function dataDirFsWarning(data_dir: string, probe: FsProbe = linuxProbe): string | null {
  try {
    const m = mountOf(parseMountinfo(probe.mountinfo()), probe.realpath(data_dir));
    if (m === null || m.fs_type !== 'ext4') return null;
    const name = probe.blockDeviceName(m.dev);
    if (probe.jbd2Entries().some((e) => e.startsWith(name + '-'))) return null;
    return `data dir on ext4 without a journal (${m.source} at ${m.mount_point}): each durable ` +
      'write-ahead append also writes the inode block (~1.5 device writes + 1 flush instead of 1 + 1; ' +
      'lazytime does not avoid it). For production, use ext4 with a journal (the mkfs default) or XFS ' +
      '(docs/operations.md)';
  } catch {
    return null;
  }
}
