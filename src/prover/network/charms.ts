/**
 * Charms' two SP1 stages on the Prover Network (the reference's `spell::prove::Prover`):
 *  1. the spell checker, COMPRESSED, stdin `[CBOR(SpellProverInput)]`; its public values must be
 *     `CBOR((SPELL_VK, full spell))` — checked before stage 2 is paid for;
 *  2. the proof wrapper, GROTH16, stdin `[stage-1 public values]` plus the stage-1 recursion proof
 *     (spliced verbatim) with the spell checker's 104-byte vk.
 * The 356-byte Groth16 proof is verified locally against the spell vk before it is returned.
 */
import { ValueMap, type Value } from '../../codec/value.js';
import { encodeCbor } from '../../codec/cbor.js';
import { CharmsError } from '../../errors.js';
import { chainTxToValue, type ProveRequest } from '../../model/request.js';
import { appMapToValue, bytesToBinary, sortAppEntries } from '../../model/primitives.js';
import {
  appSignatureToValue,
  b32MapToValue,
  beamSourceToValue,
  encodeSpellCbor,
  spellToValue,
  u32MapToValue,
  type NormalizedSpell,
} from '../../model/spell.js';
import { CURRENT_PROTOCOL_VERSION, spellVkFor } from '../../groth16/constants.js';
import { publicValuesFor } from '../../groth16/public-values.js';
import { verifySpellProof } from '../../groth16/verify.js';
import { bigEndianToBigInt, fromHex, toHex } from '../../util/bytes.js';
import { committedDigestDecimal, decodeGroth16Proof, spliceCompressedProof, stdinWithInput, stdinWithProof } from './bincode.js';
import type { SignedScrollOutputs } from '../../bitcoin/scrolls.js';
import { ProofMode } from './proto.js';
import { RequestFailure, proveOnNetwork, type ProveContext } from './request.js';

/** `SPELL_CHECKER_VK` (charms-proof-wrapper): the spell checker's `hash_u32`, 8 KoalaBear words. */
const SPELL_CHECKER_VK_WORDS: readonly number[] = [594351357, 1129065526, 1335503287, 1134438958, 1095361067, 1699468311, 1887077198, 882329457];

/** The network addresses programs by `vk.hash_bytes()`: the 8 words big-endian. */
export function vkHashFromWords(words: readonly number[]): Uint8Array {
  const out = new Uint8Array(32);
  const dv = new DataView(out.buffer);
  words.forEach((w, i) => dv.setUint32(i * 4, w, false));
  return out;
}

/**
 * The words of a vk from its `bytes32()` (Σ word_i · 2^(31·(7−i)), below 2^248 so never reduced
 * mod the BN254 order): the proof wrapper's hash from the spell vk constant.
 */
export function wordsFromBytes32(bytes32: Uint8Array): number[] {
  let v = bigEndianToBigInt(bytes32);
  const words: number[] = [];
  for (let i = 0; i < 8; i++) {
    words.unshift(Number(v & 0x7fffffffn));
    v >>= 31n;
  }
  if (v !== 0n) throw new CharmsError('INTERNAL', 'not a bytes32() of 8 words');
  return words;
}

export const SPELL_CHECKER_VK_HASH: Uint8Array = vkHashFromWords(SPELL_CHECKER_VK_WORDS);
export const PROOF_WRAPPER_VK_HASH: Uint8Array = vkHashFromWords(wordsFromBytes32(spellVkFor(CURRENT_PROTOCOL_VERSION, false)));

/** bincode(`SP1VerifyingKey`) of the spell checker (CharmsDev/charms `src/bin/charms-spell-checker-vk.bin`): stage 2's proof vk. */
export const SPELL_CHECKER_VK_BIN = fromHex(
  '60fc0000157800000000000000ab36112cff196198a52777d15b497dcd03bf5b3337fe3305c3db328a9e211dacf22d0bd1961a3a975ccc6752bca0550e0f0c387d4cb7531ade8d7cbf63c94708d2996fb58e0e3cfee0b61400ef1f65ee08e167a8902b3c00000000',
);

/**
 * CBOR of the reference's `SpellProverInput` (charms-client), field by field as ciborium writes it:
 * `{self_spell_vk: [u8;32], prev_txs, spell (full: ins and coins kept), tx_ins_beamed_source_utxos,
 * app_input: null | {app_binaries, app_private_inputs, app_signatures (omitted when empty)},
 * scroll_outputs: {script_pubkeys: {u32: hex}, signature: hex} (omitted when None)}`.
 */
export function spellProverInputCbor(req: ProveRequest, spell: NormalizedSpell, scrollOutputs?: SignedScrollOutputs): Uint8Array {
  if (spell.tx.scrolls && spell.tx.scrolls.length > 0 && !scrollOutputs)
    throw new CharmsError('INTERNAL', 'a spell with Scrolls outputs reached the prover without the signed Scrolls address map');
  const m = new ValueMap();
  m.set(
    'self_spell_vk',
    Array.from(spellVkFor(CURRENT_PROTOCOL_VERSION, false), (b) => BigInt(b)),
  );
  m.set('prev_txs', req.prev_txs.map(chainTxToValue));
  m.set('spell', spellToValue(spell, false));
  m.set(
    'tx_ins_beamed_source_utxos',
    u32MapToValue(req.tx_ins_beamed_source_utxos, (b) => beamSourceToValue(b, false)),
  );
  let appInput: Value = null;
  if (req.binaries.length > 0) {
    const ai = new ValueMap();
    ai.set(
      'app_binaries',
      b32MapToValue(req.binaries, false, (b) => bytesToBinary(b)),
    );
    ai.set(
      'app_private_inputs',
      appMapToValue(sortAppEntries([...req.app_private_inputs], 'app_private_inputs'), false, (d) => d),
    );
    if (req.app_signatures.length > 0)
      ai.set(
        'app_signatures',
        b32MapToValue(req.app_signatures, false, (s) => appSignatureToValue(s, false)),
      );
    appInput = ai;
  }
  m.set('app_input', appInput);
  if (scrollOutputs)
    m.set(
      'scroll_outputs',
      new ValueMap([
        ['script_pubkeys', u32MapToValue(scrollOutputs.scriptPubkeys, (h) => h)],
        ['signature', scrollOutputs.signature],
      ]),
    );
  return encodeCbor(m);
}

export interface TwoStageOptions {
  /** Stage 1 (spell checker): APP_ZK_PROVER. */
  app: ProveContext;
  /** Stage 2 (wrapper): SPELL_ZK_PROVER — the same client unless it is `network` with its own settings. */
  wrapper: ProveContext;
  /** Aborted when the server stops: stage 2 (a new paid request) is then not sent. */
  stopping?: AbortSignal | undefined;
}

/** Proves `spell` (full, with ins and coins) in two stages; returns the verified 356-byte Groth16 proof. */
export async function proveSpellOnNetwork(
  req: ProveRequest,
  spell: NormalizedSpell,
  opts: TwoStageOptions,
  scrollOutputs?: SignedScrollOutputs,
): Promise<Uint8Array> {
  if (spell.mock) throw new CharmsError('INVALID_SPELL', 'trying to prove a mock spell with a real prover');
  const publicValues = publicValuesFor(spell.version, encodeSpellCbor(spell), false);
  const input = spellProverInputCbor(req, spell, scrollOutputs);

  // Stage 1: a spell the network cannot execute is the caller's fault.
  let stage1: Uint8Array;
  try {
    stage1 = await proveOnNetwork(opts.app, SPELL_CHECKER_VK_HASH, stdinWithInput(input), ProofMode.COMPRESSED);
  } catch (e) {
    if (e instanceof RequestFailure && e.kind === 'unexecutable')
      throw new CharmsError('SPELL_UNEXECUTABLE', `the spell checker failed on this spell (request ${e.requestId}): the spell or its app inputs are invalid`, {
        cause: e,
      });
    throw transient('spell checker (stage 1)', e);
  }
  const { recursionProof } = spliceCompressedProof(stage1, publicValues);

  // A stopping server pays for no new request: stage 1 is spent, stage 2 is not asked for.
  if (opts.stopping?.aborted)
    throw new CharmsError(
      'SERVER_BUSY',
      'the server is shutting down: the spell checker proof (stage 1) is done, the SNARK wrapper (stage 2) was not requested; retry on another server',
    );
  // Stage 2: every failure is transient, as in the reference.
  let stage2: Uint8Array;
  try {
    stage2 = await proveOnNetwork(opts.wrapper, PROOF_WRAPPER_VK_HASH, stdinWithProof(publicValues, recursionProof, SPELL_CHECKER_VK_BIN), ProofMode.GROTH16);
  } catch (e) {
    throw transient('SNARK wrapper (stage 2)', e);
  }
  return verifiedGroth16(stage2, spell.version, publicValues);
}

function transient(stage: string, e: unknown): CharmsError {
  if (e instanceof CharmsError && e.code === 'PROVER_UNAVAILABLE') return e;
  const why = e instanceof Error ? e.message : String(e);
  return new CharmsError('PROVER_TRANSIENT', `transient prover failure in the ${stage}: ${why}; retry the request later`, { cause: e });
}

/** Decodes stage 2's proof and verifies it against the spell vk; never returns bytes that do not verify. */
function verifiedGroth16(proofFromNetwork: Uint8Array, version: number, publicValues: Uint8Array): Uint8Array {
  const unverified = (why: string, cause?: unknown) =>
    new CharmsError(
      'PROOF_UNVERIFIED',
      `the prover network returned a proof that does not verify (${why}); no transaction was built — retry the request`,
      cause === undefined ? undefined : { cause },
    );
  let g;
  try {
    g = decodeGroth16Proof(proofFromNetwork);
  } catch (e) {
    throw unverified('malformed', e);
  }
  if (toHex(g.publicValues) !== toHex(publicValues)) throw unverified('it commits to other public values');
  if (g.publicInputs[1] !== committedDigestDecimal(publicValues)) throw unverified('its committed-values digest is wrong');
  try {
    verifySpellProof({ version, publicValues, proof: g.onChainBytes, mock: false });
  } catch (e) {
    throw unverified(e instanceof Error ? e.message : String(e), e);
  }
  return g.onChainBytes;
}
