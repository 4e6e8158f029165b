// Neo4j Browser in headless Chromium, walking ctxgraph's guide: it connects (no auth), waits
// for the post-connect stylesheet, sets $conv, opens the guide with :guide, and on each step
// runs the step's first Cypher query and takes a screenshot. It fails when Browser did not
// load the stylesheet, the guide did not open, or a step's query showed no records.
//
//   node scripts/browser-screenshots.mjs CONV OUTDIR BROWSER_URL GUIDE_URL
import { createRequire } from 'node:module';
const require = createRequire(process.env.NODE_PATH + '/');
const { chromium } = require('playwright-core');

const [conv, outDir, browserURL, guideURL] = process.argv.slice(2);
const bolt = 'bolt://' + new URL(browserURL).hostname + ':' + (process.env.NEO4J_LOCAL_BOLT_PORT || '7687');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'] });
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(`${browserURL}?dbms=${bolt}`, { waitUntil: 'networkidle' });
  await page.selectOption('select[data-testid="authenticationMethod"]', 'NO_AUTH');
  await page.click('button[data-testid="connect"]');
  // browser.post_connect_cmd runs :style with ctxgraph's stylesheet.
  await page.getByText(/ContextAssembly \{/).first().waitFor({ timeout: 30000 }).catch(() => {
    throw new Error('Browser did not load ctxgraph\'s stylesheet on connect (browser.post_connect_cmd)');
  });
  const editor = page.locator('[data-testid="activeEditor"]').first();
  const type = async (cmd) => {
    await editor.click();
    await page.keyboard.type(cmd);
    await page.keyboard.press('Control+Enter');
    await page.waitForTimeout(1000);
  };
  await type(`:param conv => '${conv}'`);
  await type(`:guide ${guideURL}`);
  const drawer = page.locator('[data-testid="guidesDrawer"]');
  await drawer.locator('.runnable').first().waitFor({ timeout: 15000 }).catch(() => {
    throw new Error(`:guide ${guideURL} showed no guide`);
  });
  for (let step = 1; step <= 20; step++) {
    const queries = drawer.locator('.runnable:visible');
    const texts = await queries.allTextContents();
    const first = texts.findIndex((t) => !t.trim().startsWith(':'));
    if (first >= 0) {
      await type(':clear');
      await queries.nth(first).click(); // Browser puts a guide's query in the editor
      await editor.click();
      await page.keyboard.press('Control+Enter');
      const frame = page.locator('[data-testid="frame"]').first();
      await frame.getByText(/Started streaming|Displaying|no changes, no records/i).first().waitFor({ timeout: 15000 });
      if (await frame.getByText(/no changes, no records/i).count()) {
        throw new Error(`step ${step}: its query showed no records:\n${texts[first]}`);
      }
      await page.waitForTimeout(3000); // the graph's layout settles
      const overview = frame.locator('[data-testid="vizInspector"] button, [title="Hide overview"]');
      if (await overview.count()) await overview.first().click().catch(() => {});
    }
    const file = `${outDir}/guide-step-${step}.png`;
    await page.screenshot({ path: file });
    console.log(`${file}: ${first >= 0 ? texts[first].split('\n')[0] : '(no query)'}`);
    const next = drawer.locator('[data-testid="guideNextSlide"]');
    if (!(await next.count()) || !(await next.isEnabled())) break;
    await next.click();
    await page.waitForTimeout(500);
  }
} finally {
  await browser.close();
}
