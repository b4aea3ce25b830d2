// bench/load/strace_table.ts: the calls column of `strace -c`'s table per syscall, with and without
// an errors column, the total row and the header, separator and attach lines left out.
import { describe, expect, it } from 'vitest';
import { parseStraceTable } from '../../bench/load/strace_table.js';

const TABLE = [
  'strace: Process 4242 attached',
  'strace: Process 4242 detached',
  '% time     seconds  usecs/call     calls    errors syscall',
  '------ ----------- ----------- --------- --------- ----------------',
  ' 41.20    0.012000           2      5653           epoll_pwait',
  ' 30.10    0.009000           4      2349           futex',
  '  5.00    0.001500           3       500        12 read',
  '  0.00    0.000000           0         1         1 access',
  '------ ----------- ----------- --------- --------- ----------------',
  '100.00    0.022500           2      8503        13 total',
].join('\n');

describe('parseStraceTable', () => {
  it('takes each row\'s calls, whether or not it has errors', () => {
    expect(parseStraceTable(TABLE)).toEqual({ epoll_pwait: 5653, futex: 2349, read: 500, access: 1 });
  });

  it('gives nothing for text without a table (strace attached to nothing)', () => {
    expect(parseStraceTable('strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n')).toEqual({});
  });
});
