/**
 * Scrolls outputs of a Bitcoin spell get their scripts from the Scrolls canister: on a real
 * prover, each output listed in `tx.scrolls` gets the canister's signed P2WPKH scriptPubKey as its
 * `dest` (signature verified; a dest the client gave is replaced, as the reference's prover server
 * does). Mock mode does not call the canister, and a prover without a Scrolls client cannot:
 * both refuse such spells, so no output is ever built with an empty script (anyone could spend it).
 */
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import type { NormalizedSpell } from '../model/spell.js';
import type { Chain } from '../model/request.js';
import { bindScrollOutputs, type SignedScrollOutputs } from '../bitcoin/scrolls.js';
import type { ScrollsClient } from '../scrolls/client.js';

export interface ScrollsBinding {
  spell: NormalizedSpell;
  /** The canister's signed map (absent when the spell has no Bitcoin Scrolls outputs). */
  signed?: SignedScrollOutputs;
}

const list = (ix: readonly number[]) => ix.map((i) => `#${i}`).join(', ');

export async function bindBitcoinScrolls(
  spell: NormalizedSpell,
  chain: Chain,
  opts: { mock: boolean; scrolls: ScrollsClient | undefined; log?: Logger },
): Promise<ScrollsBinding> {
  const scrolls = spell.tx.scrolls ?? [];
  if (chain !== 'bitcoin' || scrolls.length === 0) return { spell };
  if (opts.mock)
    throw new CharmsError(
      'UNSUPPORTED',
      `Scrolls output(s) ${list(scrolls)}: mock mode cannot bind Scrolls outputs. Their scriptPubKeys come signed from the Scrolls canister, which a mock prover does not call, and an output without them would have no script an owner controls; prove this spell on a real prover server (without --mock / MOCK)`,
    );
  if (!opts.scrolls)
    throw new CharmsError('CONFIG', `Scrolls output(s) ${list(scrolls)}: this prover has no Scrolls canister client, so it cannot bind Scrolls outputs`);
  const txIn0 = spell.tx.ins?.[0];
  if (!txIn0) throw new CharmsError('INVALID_SPELL', 'a spell with Scrolls outputs needs inputs: the first input anchors the Scrolls keys');
  opts.log?.info(`binding Scrolls output(s) ${list(scrolls)} through the Scrolls canister ${opts.scrolls.settings.bitcoinCanisterId}`);
  // unreachable canister: UPSTREAM_UNAVAILABLE (503); its refusal: SCROLLS_REFUSED (400)
  const signed = await opts.scrolls.bitcoinScrollOutputs(txIn0, scrolls);
  return { spell: bindScrollOutputs(spell, signed, opts.scrolls.keys.bitcoinAddrsPubkey), signed };
}
