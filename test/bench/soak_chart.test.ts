// The soak's chart script: it finds the soak_hour line among log lines and draws every series.
import { describe, expect, it } from 'vitest';
import { soakSamples, soakSvg } from '../../bench/soak_chart.js';

const sample = (minute: number, rss_mb: number) => ({
  minute, rss_mb, rss_anon_mb: rss_mb - 50, rss_file_mb: 50, heap_mb: 40, p50_ms: 1, p99_ms: 9, load_avg_1m: 3,
});

describe('soak chart', () => {
  it('reads the last soak_hour line, not the per-minute lines or logs', () => {
    const text = [
      '{"minute":1,"rss_mb":1}',
      'some log line',
      JSON.stringify({ bench: 'soak_hour', samples: [sample(0, 100)] }),
      JSON.stringify({ bench: 'soak_hour', samples: [sample(0, 150), sample(1, 160)] }),
    ].join('\n');
    expect(soakSamples(text).map((s) => s.rss_mb)).toEqual([150, 160]);
    expect(() => soakSamples('{"bench":"flood_ws"}')).toThrow(/soak_hour/);
  });

  it('draws one line per series in two panels, the y axis above the largest value', () => {
    const svg = soakSvg([sample(0, 150), sample(1, 180), sample(2, 230)], 'hour');
    // Memory: RSS, anonymous, file, heaps; latency: p99, p50, load (p50/p99 start at minute 1).
    expect(svg.match(/<polyline /g)?.length).toBe(7);
    expect(svg).toContain('hour: memory');
    expect(svg).toContain('>250<'); // nice maximum above 230 MB
    expect(svg.startsWith('<svg')).toBe(true);
  });
});
