import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.resolve(__dirname, '../artifacts/panel');

/** Debian's Chromium, headless; `.ci/run` installs it when missing. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (as .ci/run does)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core in the page. It is evaluated through the DevTools protocol, not added as a script
 * tag: the panel's Content-Security-Policy refuses inline scripts, as it should.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate('typeof window.axe');
  if (loaded !== 'object') await page.evaluate(AXE_SOURCE);
  return page.evaluate<AxeViolation[]>(`axe
    .run(document, { resultTypes: ['violations'] })
    .then((r) => r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')),
    })))`);
}

/** Serious and critical violations fail the test; minor and moderate ones are only reported. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  const violations = await axeViolations(page);
  const blocking = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const others = violations.filter((v) => !blocking.includes(v));
  if (others.length > 0) console.warn(`axe (${name}): ${JSON.stringify(others)}`);
  expect({ page: name, violations: blocking }).toEqual({ page: name, violations: [] });
}
