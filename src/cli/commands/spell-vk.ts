import type { CommandDef } from '../define.js';
import { optFlag } from '../io.js';
import { toHex } from '../../util/bytes.js';
import { CURRENT_VERSION } from '../../model/spell.js';
import { spellVkFor } from '../../proof/constants.js';

/** `{prover, version, vk}` with keys sorted as serde_json prints them; `--mock` adds `mock: true`. */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const mock = optFlag(a, 'mock');
  const vk = toHex(spellVkFor(CURRENT_VERSION, mock));
  const body = `"prover":${ctx.prover},"version":${CURRENT_VERSION},"vk":"${vk}"`;
  ctx.stdout(`{${mock ? '"mock":true,' : ''}${body}}\n`);
};
export default run;
