// Drives the inspector in headless Chromium as a person would, and prints what it saw as
// one JSON object for TestInspectorInChromium to check: it opens /inspect, enters the key,
// lists the conversations, searches for TITLE and picks it, picks the last assistant answer
// on its main branch, waits for the request's sha256 check, clicks the omitted record of
// type memory for its provenance and raw body, and compares the call with the policy
// version named DIFF_VERSION. With OUTDIR it writes a screenshot of each stage there.
//
//   node inspect.mjs BASE KEY TITLE DIFF_VERSION [OUTDIR]
import { createRequire } from 'node:module';
const require = createRequire(process.env.NODE_PATH + '/');
const { chromium } = require('playwright-core');

const [base, key, title, diffVersion, outDir] = process.argv.slice(2);
const seen = { requests: [] };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
const shot = async (page, name) => { if (outDir) await page.screenshot({ path: `${outDir}/${name}.png` }); };
try {
  const page = await browser.newPage({ viewport: { width: 1680, height: 1050 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('request', (r) => seen.requests.push(r.url()));
  await page.goto(`${base}/inspect`);
  await page.locator('#key').fill(key);
  await page.locator('#key-form button[type=submit]').click();
  await page.locator('#conversation-list li.pick').first().waitFor();
  seen.listed = await page.locator('#conversation-list li.pick').evaluateAll((lis) => lis.map((li) => li.firstChild.textContent));
  seen.keyInStorage = await page.evaluate(() => sessionStorage.getItem('ctxgraph-inspector-key') !== null);
  seen.pageURL = page.url();

  // Search by a part of the title, in another case.
  await page.locator('#search').fill(title.split(' ')[0].toLowerCase());
  await page.waitForFunction((t) => [...document.querySelectorAll('#conversation-list li.pick')].every((li) => li.firstChild.textContent.toLowerCase().includes(t)),
    title.split(' ')[0].toLowerCase());
  seen.searched = await page.locator('#conversation-list li.pick').evaluateAll((lis) => lis.map((li) => li.firstChild.textContent));
  await page.locator('#conversation-list li.pick', { hasText: title }).first().click();
  await page.locator('#history li.assistant').first().waitFor();
  seen.branches = await page.locator('[data-branch]').allTextContents();
  await page.locator('#history li.assistant').last().click();

  const step = page.locator('#run .step').first();
  await step.locator('.verified, .mismatch').waitFor({ timeout: 20000 });
  const check = step.locator('.verified, .mismatch');
  seen.assemblyId = await step.getAttribute('data-assembly');
  seen.shownSha256 = await check.getAttribute('data-sha256');
  seen.recordedSha256 = await check.getAttribute('data-recorded-sha256');
  seen.verified = (await check.getAttribute('class')) === 'verified';
  seen.requestMessages = await step.locator('.request .msg pre').allTextContents();
  seen.tokens = Number(await step.locator('[data-tokens]').getAttribute('data-tokens'));
  seen.sectionsSum = Number(await step.locator('[data-sections-sum]').getAttribute('data-sections-sum'));
  seen.sections = await step.locator('[data-section]').evaluateAll((els) => els.map((e) => e.dataset.section));
  seen.omitted = await step.locator('table.omitted tr[data-ref]').evaluateAll((rows) =>
    rows.map((r) => ({ ref: r.dataset.ref, type: r.dataset.type, reason: r.querySelector('.reason').textContent })));
  seen.included = await step.locator('table.included tr[data-ref]').evaluateAll((rows) => rows.map((r) => r.dataset.ref));
  await shot(page, 'inspect-run');

  // A memory the call left out: its provenance, down to the raw body.
  await step.locator('table.omitted tr[data-type=memory]').first().click();
  await step.locator('.explain pre.raw').first().waitFor({ timeout: 15000 });
  seen.path = await step.locator('.explain .path .node').evaluateAll((ns) => ns.map((n) => n.dataset.step));
  seen.raw = await step.locator('.explain pre.raw').first().textContent();
  await step.locator('.explain').scrollIntoViewIfNeeded();
  await shot(page, 'inspect-provenance');

  // What another policy version would have sent.
  const option = await step.locator('select.policy option').evaluateAll((os, v) => (os.find((o) => o.value.startsWith(v + '@')) || {}).value, diffVersion);
  if (!option) throw new Error(`the policy list offers no ${diffVersion}`);
  await step.locator('select.policy').selectOption(option);
  await step.locator('button.run-diff').click();
  await step.locator('.diff [data-identical]').waitFor();
  seen.diffIdentical = await step.locator('.diff [data-identical]').getAttribute('data-identical');
  seen.diffRows = await step.locator('.diff table.diff-records tr[data-ref]').evaluateAll((rows) =>
    rows.map((r) => ({ ref: r.dataset.ref, change: r.children[2].textContent, other: r.children[4].firstChild.textContent })));
  await step.locator('.diff').scrollIntoViewIfNeeded();
  await shot(page, 'inspect-diff');
  seen.errors = errors;
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
