import type { Run } from '../define.js';
import type { txShowSpellOptions } from '../options.js';
import { json, yaml } from '../output.js';
import { fromHex } from '../../util/bytes.js';
import { extractAndVerifySpell, isNoSpell } from '../../verify/index.js';
import { spellToValue } from '../../model/spell.js';
import { tagTx } from '../../chains/tagged.js';
import type { Chain } from '../../model/request.js';
import { debugOf } from '../../settings/settings.js';
import { otherChainOf } from '../../chains/detect.js';
import { CharmsError } from '../../errors.js';

/** Said after "No spell found" when the spell is there with a mock proof, which only --mock accepts. */
const MOCK_HINT = ': it carries a spell with a MOCK proof (not valid on chain); pass --mock to show it';

/** Whether the transaction carries a spell that verifies as a mock spell. */
function hasMockSpell(chain: Chain, bytes: Uint8Array): boolean {
  try {
    return extractAndVerifySpell(tagTx(chain, bytes), true).mock;
  } catch {
    return false;
  }
}

/**
 * Prints the verified spell (YAML, or JSON with --json). A transaction without a valid spell is
 * not an error: "No spell found in the transaction" on stderr, exit 0 (as the reference); one
 * whose spell has a mock proof says so, and that --mock shows it.
 * Unparseable hex or transaction, or an unsupported chain, is an error (exit 1): `isNoSpell`.
 */
const run: Run<typeof txShowSpellOptions> = async ({ opts }, ctx) => {
  const chain = opts.chain;
  const bytes = fromHex(opts.tx, '--tx');
  let spell;
  try {
    spell = extractAndVerifySpell(tagTx(chain, bytes), opts.mock);
  } catch (e) {
    if (!isNoSpell(e)) {
      const other = otherChainOf(bytes, chain);
      if (other && e instanceof CharmsError)
        throw new CharmsError(
          e.code,
          `this looks like a ${other === 'cardano' ? 'Cardano' : 'Bitcoin'} transaction: use --chain ${other} (as ${chain}: ${e.message})`,
          { cause: e },
        );
      throw e;
    }
    if (debugOf(ctx.env)) ctx.stderr(`${(e as Error).message}\n`);
    ctx.stderr(`No spell found in the transaction${!opts.mock && hasMockSpell(chain, bytes) ? MOCK_HINT : ''}\n`);
    return;
  }
  const value = spellToValue(spell, true);
  return opts.json ? json(value, { pretty: true, newline: false }) : yaml(value); // JSON: no trailing newline, as the reference
};
export default run;
