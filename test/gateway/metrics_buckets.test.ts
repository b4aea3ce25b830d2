// BucketHistogram (src/gateway/metrics/buckets.ts): counts into plain arrays on the request path,
// exposed by prom-client's Registry in the same text prom-client's own Histogram writes.
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BucketHistogram } from '../../src/gateway/metrics/buckets.js';

const BOUNDS = [0.001, 0.01, 0.1];

describe('BucketHistogram', () => {
  it('writes exactly what prom-client\'s Histogram writes for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const h = new BucketHistogram({ name: 'x_seconds', help: 'x', label: 'stage', buckets: BOUNDS, registry: ours });
    const p = new Histogram({ name: 'x_seconds', help: 'x', labelNames: ['stage'], buckets: BOUNDS, registers: [theirs] });
    const a = h.series('a');
    const b = h.series('b');
    // Values on a bound go into that bound's bucket (le: less than or equal), above the last into +Inf.
    const values: [string, number][] = [['a', 0.0005], ['a', 0.001], ['a', 0.002], ['b', 0.1], ['b', 5], ['a', 0.05], ['b', 0]];
    for (const [stage, v] of values) {
      (stage === 'a' ? a : b).observe(v);
      p.observe({ stage }, v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('x_seconds_bucket{le="0.001",stage="a"} 2');
    expect(await ours.metrics()).toContain('x_seconds_bucket{le="+Inf",stage="b"} 3');
    expect(a.count).toBe(4);
    expect(b.sum).toBeCloseTo(5.1, 12);
  });

  it('an unlabelled family, and reset() zeroes every series', async () => {
    const registry = new Registry();
    const h = new BucketHistogram({ name: 'y_requests', help: 'y', label: null, buckets: [1, 2, 4], registry });
    const s = h.series('');
    for (const v of [1, 3, 3, 9]) s.observe(v);
    const text = await registry.metrics();
    expect(text).toContain('y_requests_bucket{le="1"} 1\ny_requests_bucket{le="2"} 1\ny_requests_bucket{le="4"} 3\ny_requests_bucket{le="+Inf"} 4');
    expect(text).toContain('y_requests_sum 16\ny_requests_count 4');
    h.reset();
    expect(await registry.metrics()).toContain('y_requests_count 0');
  });
});
