import type { CommandDef } from '../define.js';
import { readSpellInputs } from '../spell-inputs.js';
import { checkSpell } from '../../checker/check.js';
import { configureRunner, runApp, runnerLimitsFromEnv, shutdownRunner } from '../../runner/index.js';
import { toHex } from '../../util/bytes.js';

/** Checks the spell; prints notices and `cycles spent: [..]` to stderr, as the reference. */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const i = await readSpellInputs(a, ctx);
  await configureRunner(runnerLimitsFromEnv(ctx.env));
  try {
    const r = await checkSpell({
      spell: i.spell,
      prevTxs: i.prevTxs,
      privateInputs: i.privateInputs,
      beamedFrom: i.beamedFrom,
      binaries: new Map(i.binaries.map(([vk, wasm]) => [toHex(vk), wasm])),
      appSignatures: i.appSignatures,
      chain: i.chain,
      mock: i.mock,
      runApp,
      onAppStderr: (app, text) => ctx.stderr(text.endsWith('\n') || text === '' ? text : `${text}\n`),
    });
    for (const n of r.notices) ctx.stderr(`${n}\n`);
    ctx.stderr(`cycles spent: [${r.cycles.join(', ')}]\n`);
  } finally {
    await shutdownRunner();
  }
};
export default run;
