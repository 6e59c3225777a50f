/** Reads the options `spell check` and `spell prove` share into library inputs. */
import { resolve } from 'node:path';
import type { CliContext, ParsedArgs } from './define.js';
import { optFlag, optList, optString, readFileBytes, readFileText, readInput } from './io.js';
import { parseAppSignatures, parseBeamedFrom, parsePrevTx, parsePrivateInputs, parseSpellText } from '../model/inputs.js';
import { detectChain } from '../chains/detect.js';
import { parseChain, type Chain, type ChainTx } from '../model/request.js';
import type { App, B32, Data } from '../model/primitives.js';
import type { AppSignature, BeamSource, NormalizedSpell } from '../model/spell.js';
import { vkOfBinary } from '../keys/app-key.js';

export interface SpellInputs {
  spell: NormalizedSpell;
  privateInputs: [App, Data][];
  beamedFrom: Map<number, BeamSource>;
  binaries: [B32, Uint8Array][];
  appSignatures: [B32, AppSignature][];
  prevTxs: ChainTx[];
  chain: Chain;
  mock: boolean;
}

export async function readSpellInputs(a: ParsedArgs, ctx: CliContext): Promise<SpellInputs> {
  const file = (o: string, what: string) => {
    const p = optString(a, o);
    return p === undefined ? undefined : readFileText(resolve(ctx.cwd, p), what);
  };
  const spell = parseSpellText(await readInput(ctx, optString(a, 'spell') ?? '/dev/stdin', 'spell'));
  const pi = file('private-inputs', 'private inputs');
  const sigs = file('app-signatures', 'app signatures');
  const beamed = optString(a, 'beamed-from');
  const binaries = optList(a, 'app-bins').map((p) => {
    const wasm = readFileBytes(resolve(ctx.cwd, p), 'app binary');
    return [vkOfBinary(wasm), wasm] as [B32, Uint8Array];
  });
  return {
    spell,
    privateInputs: pi === undefined ? [] : parsePrivateInputs(pi),
    beamedFrom: beamed === undefined ? new Map() : parseBeamedFrom(beamed),
    binaries,
    appSignatures: sigs === undefined ? [] : parseAppSignatures(sigs),
    prevTxs: optList(a, 'prev-txs').map((s, i) => parsePrevTx(s, detectChain, i)),
    chain: parseChain(optString(a, 'chain') ?? 'bitcoin', '--chain'),
    mock: optFlag(a, 'mock'),
  };
}
