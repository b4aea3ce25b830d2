import { describe, expect, it } from 'vitest';
import { frontEventsText, parsePerfStatCsv } from '../../bench/load/perf_stat.js';

describe('parsePerfStatCsv', () => {
  it('reads perf stat -x, lines by event and leaves out what was not counted', () => {
    const text = [
      '# started on Sun Nov 29 11:00:00 2026',
      '',
      '1234.56,msec,task-clock,1234560000,100.00,0.617,CPUs utilized',
      '8021,,context-switches,1234560000,100.00,6.497,K/sec',
      '52011,,raw_syscalls:sys_enter,1234560000,100.00,,',
      '<not counted>,,syscalls:sys_enter_sendto,0,0.00,,',
      '<not supported>,,cycles,0,100.00,,',
      'garbage',
    ].join('\n');
    const m = parsePerfStatCsv(text);
    expect(m.get('task-clock')).toBe(1234.56);
    expect(m.get('context-switches')).toBe(8021);
    expect(m.get('raw_syscalls:sys_enter')).toBe(52011);
    expect(m.has('syscalls:sys_enter_sendto')).toBe(false);
    expect(m.has('cycles')).toBe(false);
    expect(m.size).toBe(3);
  });
});

describe('frontEventsText', () => {
  it('gives each counted event per request, task-clock in µs, in FRONT_EVENTS order', () => {
    const m = new Map([['context-switches', 500], ['task-clock', 61.5], ['syscalls:sys_enter_futex', 46]]);
    expect(frontEventsText(m, 1000)).toBe('task-clock 61.5, context-switches 0.500, syscalls:sys_enter_futex 0.046');
  });
  it('says so when nothing was counted', () => {
    expect(frontEventsText(null, 10)).toContain('none');
    expect(frontEventsText(new Map(), 10)).toContain('none');
  });
});
