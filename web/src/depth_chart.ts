// The depth chart: cumulative quantity against price, bids (left, green) and asks (right, red),
// drawn on a canvas from the book the socket keeps in sync.
import type { BookLevel } from '../../src/client/index.js';
import { chartValue } from './session.js';

/** Levels per side the chart covers. */
const DEPTH_LEVELS = 100;
/** The narrowest price range drawn, as a fraction of the price. */
const MIN_SPAN_FRACTION = 0.001;

function cumulative(levels: readonly BookLevel[]): { price: number; total: number }[] {
  let total = 0;
  const out: { price: number; total: number }[] = [];
  for (const [p, q] of levels.slice(0, DEPTH_LEVELS)) {
    total += chartValue(q);
    out.push({ price: chartValue(p), total });
  }
  return out;
}

export function drawDepth(canvas: HTMLCanvasElement, bids: readonly BookLevel[], asks: readonly BookLevel[]): void {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth;
  const hgt = canvas.clientHeight;
  if (w === 0 || hgt === 0) return;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(hgt * dpr);
  const g = canvas.getContext('2d');
  if (g === null) return;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, hgt);
  const b = cumulative(bids);
  const a = cumulative(asks);
  canvas.dataset.levels = String(b.length + a.length);
  if (b.length + a.length === 0) {
    g.fillStyle = '#7d8a99';
    g.font = '12px system-ui';
    g.fillText('empty book', 8, 18);
    return;
  }
  let lo = b.length > 0 ? b[b.length - 1].price : a[0].price;
  let hi = a.length > 0 ? a[a.length - 1].price : b[0].price;
  if (hi - lo < lo * MIN_SPAN_FRACTION) {
    // One level, or all within a hair: widen so the step shows (0.1% either side).
    const mid = (hi + lo) / 2;
    lo = mid * (1 - MIN_SPAN_FRACTION);
    hi = mid * (1 + MIN_SPAN_FRACTION);
  }
  const span = hi - lo || 1;
  const top = Math.max(b.length > 0 ? b[b.length - 1].total : 0, a.length > 0 ? a[a.length - 1].total : 0) || 1;
  const pad = 4;
  const x = (p: number): number => pad + ((p - lo) / span) * (w - 2 * pad);
  const y = (t: number): number => hgt - 14 - (t / top) * (hgt - 24);
  const side = (pts: { price: number; total: number }[], color: string, fillColor: string, edge: number): void => {
    if (pts.length === 0) return;
    g.beginPath();
    g.moveTo(x(pts[0].price), y(0));
    let prev = 0;
    for (const pt of pts) {
      g.lineTo(x(pt.price), y(prev));
      g.lineTo(x(pt.price), y(pt.total));
      prev = pt.total;
    }
    g.lineTo(edge, y(prev));
    g.strokeStyle = color;
    g.lineWidth = 1.5;
    g.stroke();
    g.lineTo(edge, y(0));
    g.closePath();
    g.fillStyle = fillColor;
    g.fill();
  };
  side(b, '#26a69a', 'rgba(38,166,154,0.18)', pad);
  side(a, '#ef5350', 'rgba(239,83,80,0.18)', w - pad);
  g.fillStyle = '#7d8a99';
  g.font = '11px system-ui';
  g.fillText(lo.toFixed(2), pad, hgt - 2);
  const hiText = hi.toFixed(2);
  g.fillText(hiText, w - pad - g.measureText(hiText).width, hgt - 2);
}
