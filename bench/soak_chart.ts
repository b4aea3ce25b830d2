// Draws the long soak's per-minute series (bench/flood.ts --soak) as an SVG for docs/benchmarks.md:
//   node dist/bench/soak_chart.js <file holding the soak_hour JSON line> <out.svg> [title]
// Two panels on one minute axis: memory (RSS, its anonymous and file-backed parts, the threads'
// heaps together) and latency (p50 and p99 of each minute's requests, with the machine's load
// average, since the machine is shared and the latency follows it).
import { readFileSync, writeFileSync } from 'node:fs';
import { runIfMain } from './cli_args.js';

export interface SoakSample {
  minute: number;
  rss_mb: number;
  rss_anon_mb: number;
  rss_file_mb?: number;
  heap_mb: number;
  p50_ms: number;
  p99_ms: number;
  load_avg_1m?: number;
}

interface Series {
  name: string;
  color: string;
  values: (number | undefined)[];
  dashed?: boolean;
}

const WIDTH = 860;
const PANEL_HEIGHT = 260;
const MARGIN = { left: 64, right: 150, top: 34, bottom: 36 };

function niceMax(x: number): number {
  if (x <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function panel(y0: number, title: string, unit: string, minutes: number[], series: Series[]): string {
  const plot_w = WIDTH - MARGIN.left - MARGIN.right;
  const plot_h = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== undefined));
  const y_max = niceMax(Math.max(1, ...all));
  const x_max = Math.max(1, ...minutes);
  const X = (m: number): number => MARGIN.left + (m / x_max) * plot_w;
  const Y = (v: number): number => y0 + MARGIN.top + plot_h - (v / y_max) * plot_h;
  const out: string[] = [];
  out.push(`<text x="${MARGIN.left}" y="${y0 + 20}" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (let i = 0; i <= 5; i++) {
    const v = (y_max * i) / 5;
    out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plot_w}" y1="${Y(v)}" y2="${Y(v)}" stroke="#ddd"/>`);
    out.push(`<text x="${MARGIN.left - 6}" y="${Y(v) + 4}" font-size="11" text-anchor="end">${Math.round(v * 10) / 10}</text>`);
  }
  const x_step = x_max > 30 ? 10 : x_max > 10 ? 5 : 1;
  for (let m = 0; m <= x_max; m += x_step) {
    out.push(`<text x="${X(m)}" y="${y0 + MARGIN.top + plot_h + 16}" font-size="11" text-anchor="middle">${m}</text>`);
  }
  out.push(`<text x="${MARGIN.left + plot_w / 2}" y="${y0 + PANEL_HEIGHT - 4}" font-size="11" text-anchor="middle">minute</text>`);
  out.push(`<text x="14" y="${y0 + MARGIN.top + plot_h / 2}" font-size="11" transform="rotate(-90 14 ${y0 + MARGIN.top + plot_h / 2})" text-anchor="middle">${esc(unit)}</text>`);
  out.push(`<rect x="${MARGIN.left}" y="${y0 + MARGIN.top}" width="${plot_w}" height="${plot_h}" fill="none" stroke="#888"/>`);
  series.forEach((s, k) => {
    const pts = minutes.map((m, i) => (s.values[i] === undefined ? null : `${X(m).toFixed(1)},${Y(s.values[i] as number).toFixed(1)}`)).filter((p) => p !== null);
    if (pts.length > 0) {
      out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5,4"' : ''} points="${pts.join(' ')}"/>`);
    }
    const ly = y0 + MARGIN.top + 12 + k * 18;
    const lx = MARGIN.left + plot_w + 12;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5,4"' : ''}/>`);
    out.push(`<text x="${lx + 28}" y="${ly}" font-size="11">${esc(s.name)}</text>`);
  });
  return out.join('\n');
}

/** The SVG of a soak's samples. */
export function soakSvg(samples: readonly SoakSample[], title: string): string {
  const minutes = samples.map((s) => s.minute);
  const memory = panel(0, `${title}: memory`, 'MB', minutes, [
    { name: 'RSS', color: '#1f77b4', values: samples.map((s) => s.rss_mb) },
    { name: 'RSS anonymous', color: '#d62728', values: samples.map((s) => s.rss_anon_mb) },
    { name: 'RSS file (LMDB)', color: '#7f7f7f', values: samples.map((s) => s.rss_file_mb), dashed: true },
    { name: 'heaps (threads)', color: '#2ca02c', values: samples.map((s) => s.heap_mb) },
  ]);
  // Minute 0 has no requests yet (no latency).
  const lat = (v: number, s: SoakSample): number | undefined => (s.minute === 0 ? undefined : v);
  const latency = panel(PANEL_HEIGHT, `${title}: latency of the minute's requests`, 'ms / load', minutes, [
    { name: 'p99 ms', color: '#ff7f0e', values: samples.map((s) => lat(s.p99_ms, s)) },
    { name: 'p50 ms', color: '#9467bd', values: samples.map((s) => lat(s.p50_ms, s)) },
    { name: 'load avg (1 min)', color: '#8c564b', values: samples.map((s) => s.load_avg_1m), dashed: true },
  ]);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${2 * PANEL_HEIGHT}" font-family="sans-serif">\n` +
    `<rect width="100%" height="100%" fill="white"/>\n${memory}\n${latency}\n</svg>\n`;
}

/** The samples of the last soak_hour JSON line in `text`. */
export function soakSamples(text: string): SoakSample[] {
  let found: SoakSample[] | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const x = JSON.parse(line) as { bench?: string; samples?: SoakSample[] };
      if (x.bench === 'soak_hour' && Array.isArray(x.samples)) found = x.samples;
    } catch {
      // a log line, not the result
    }
  }
  if (found === null) throw new Error('no {"bench":"soak_hour",...} line found');
  return found;
}

async function main(): Promise<void> {
  const [input, output, title] = process.argv.slice(2);
  if (input === undefined || output === undefined) {
    console.error('usage: node dist/bench/soak_chart.js <soak output file> <out.svg> [title]');
    process.exit(64);
  }
  writeFileSync(output, soakSvg(soakSamples(readFileSync(input, 'utf8')), title ?? 'steady-flow soak'));
}

runIfMain(import.meta.url, main);
