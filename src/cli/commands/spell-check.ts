import type { Run } from '../define.js';
import type { spellCheckOptions } from '../options.js';
import { configureOneShotRunner } from '../one-shot-runner.js';
import { readSpellInputs } from '../spell-inputs.js';
import { checkSpell } from '../../checker/check.js';
import { prepareAhead, runApp, shutdownRunner } from '../../runner/index.js';

/** Checks the spell; prints notices and `cycles spent: [..]` to stderr, as the reference. */
const run: Run<typeof spellCheckOptions> = async ({ opts }, ctx) => {
  const i = await readSpellInputs(opts, ctx);
  await configureOneShotRunner(ctx.env);
  prepareAhead(i.binaries.map(([, wasm]) => wasm)); // overlaps with the prerequisite-spell checks
  try {
    const r = await checkSpell({
      ...i,
      mock: opts.mock,
      runApp,
      onAppStderr: (_app, text) => ctx.stderr(text.endsWith('\n') || text === '' ? text : `${text}\n`),
    });
    for (const n of r.notices) ctx.stderr(`${n}\n`);
    ctx.stderr(`cycles spent: [${r.cycles.join(', ')}]\n`);
  } finally {
    await shutdownRunner();
  }
};
export default run;
