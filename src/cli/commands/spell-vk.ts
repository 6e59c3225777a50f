import type { Run } from '../define.js';
import type { spellVkOptions } from '../options.js';
import { json } from '../output.js';
import { ValueMap } from '../../codec/value.js';
import { toHex } from '../../util/bytes.js';
import { CURRENT_VERSION } from '../../model/spell.js';
import { spellVkFor } from '../../groth16/constants.js';

/** `{prover, version, vk}` with keys sorted as serde_json prints them; `--mock` adds `mock: true`. */
const run: Run<typeof spellVkOptions> = async ({ opts }, ctx) => {
  const vk = toHex(spellVkFor(CURRENT_VERSION, opts.mock));
  return json(
    new ValueMap([...(opts.mock ? [['mock', true] as [string, boolean]] : []), ['prover', ctx.prover], ['version', BigInt(CURRENT_VERSION)], ['vk', vk]]),
  );
};
export default run;
