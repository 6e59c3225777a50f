import type { CommandDef } from '../define.js';
import { optDefaulted, optFlag, optString } from '../io.js';
import { fromHex } from '../../util/bytes.js';
import { extractAndVerifySpell, isNoSpell, spellToJson, spellToYaml } from '../../verify/index.js';
import { parseChain } from '../../model/request.js';
import { tagTx } from '../../chains/tagged.js';
import { debugOf } from '../../settings/settings.js';
import { otherChainOf } from '../../chains/detect.js';
import { CharmsError } from '../../errors.js';

/**
 * Prints the verified spell (YAML, or JSON with --json). A transaction without a valid spell is
 * not an error: "No spell found in the transaction" on stderr, exit 0 (as the reference).
 * Unparseable hex or transaction, or an unsupported chain, is an error (exit 1): `isNoSpell`.
 */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const chain = parseChain(optDefaulted(a, 'chain'), '--chain');
  const bytes = fromHex(optString(a, 'tx')!, '--tx');
  let spell;
  try {
    spell = extractAndVerifySpell(tagTx(chain, bytes), optFlag(a, 'mock'));
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
    ctx.stderr('No spell found in the transaction\n');
    return 0;
  }
  ctx.stdout(optFlag(a, 'json') ? spellToJson(spell) : spellToYaml(spell)); // JSON: no trailing newline, as the reference
  return 0;
};
export default run;
