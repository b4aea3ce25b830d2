// Debian's Chromium driven by playwright-core for the web view's tests (docs/web.md): headless,
// no sandbox (tests run as root in CI containers), background networking off so the browser
// talks to nothing but the loopback test server. `make chromium` installs it (`make test` runs it).
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from '../server/harness.js';

export const CHROMIUM_PATH = process.env.RINGBOOK_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of each page (gitignored; described in docs/web.md). */
export const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'web');

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-domain-reliability',
  '--disable-sync',
  '--no-first-run',
  '--no-default-browser-check',
];

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM_PATH}: run \`make chromium\` (apt-get install -y chromium), or set RINGBOOK_CHROMIUM to its path`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Everything that went wrong in a page: console errors, uncaught exceptions, failed requests
 * and HTTP error answers. `take()` returns them and starts a fresh list.
 */
export function watchPage(page: Page): { take(): string[] } {
  let problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return {
    take(): string[] {
      const out = problems;
      problems = [];
      return out;
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
