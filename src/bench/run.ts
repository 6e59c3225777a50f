/**
 * `npm run bench`: runs every benchmark module in this directory (each exports `run()`), or
 * only those named on the command line (`npm run bench -- proof runner`).
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.js') && f !== 'run.js' && !f.endsWith('.test.js'))
  .map((f) => f.slice(0, -3))
  .filter((n) => wanted.length === 0 || wanted.includes(n))
  .sort();
for (const name of names) {
  const mod = (await import(new URL(`./${name}.js`, import.meta.url).href)) as { run?: () => Promise<void> };
  if (typeof mod.run !== 'function') continue;
  console.log(`\n## ${name}`);
  await mod.run();
}
process.exit(0);
