/**
 * The decoders under fuzz, each with its seed inputs. Seeds come from the repo (template spells,
 * WAT fixtures, the AssemblyScript template app, the fuel vectors) and, when present, from
 * the test vectors in `vectors/` (chain transactions, ProveRequest vectors) and any extra files passed in
 * (e.g. real app binaries for `npm run fuzz -- --wasm app.wasm`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCbor, encodeCbor } from '../../codec/cbor.js';
import { Tagged, ValueMap } from '../../codec/value.js';
import { parseJson, toJsonCompact } from '../../codec/json.js';
import { parseTx } from '../../bitcoin/tx.js';
import { blockWrite, spentOutpoints } from '../../indexer/block-write.js';
import type { BlockInputs } from '../../indexer/store.js';
import { parseBlock, serializeBlock } from '../../bitcoin/block.js';
import { coinbase } from '../memory-chain.js';
import { findBitcoinSpell, fillFromBitcoinTx } from '../../bitcoin/extract.js';
import { findSpellPayload } from '../../cardano/extract.js';
import { parseCardanoTx, parseInputs, parseOutputs, parseRedeemers } from '../../cardano/tx.js';
import { decodeSpellAndProof } from '../../groth16/spell.js';
import { parseSpellText } from '../../model/inputs.js';
import { decodeProveRequest } from '../../prover/service.js';
import { proveRequestToValue } from '../../model/request.js';
import { encodeSpellCbor, spellToValue } from '../../model/spell.js';
import { opReturnSpellPayload } from '../../bitcoin/spell-location.js';
import { mutateCborStructure } from './cbor-mutate.js';
import { decodeFrame, decodeNextBlock } from '../../sources/ogmios-protocol.js';
import { prepareModule } from '../../runner/prepare.js';
import { DEFAULT_RUNNER_LIMITS } from '../../runner/index.js';
import { silentLogger } from '../../infra/log.js';
import { FUEL_VECTORS } from '../../runner/fixtures/fuel-vectors.js';
import { compileWatFixture } from '../../runner/fixtures/wat.js';
import { fromHex } from '../../util/bytes.js';
import { templatesDir } from '../../app/new.js';
import { hasShared, sharedPath } from '../shared.js';
import { mutateBytes, type FuzzTarget, type Rng } from './harness.js';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: false });

const SEED_TXID = 'dc78b09d767c8565c4a58a95e7ad5ee22b28fc1685535056a395dc94929cdd5f';
const SEED_B32 = '2d4c08e7f197c8e8dce161dd63255565c22e43a9c83b04e49707b8a78223867d';

/** The repo's template spells with their placeholders filled in (those that then parse). */
function templateSpells(): string[] {
  return templateSpellTexts().filter((t) => {
    try {
      parseSpellText(t);
      return true;
    } catch {
      return false; // a template with a placeholder this list does not know yet
    }
  });
}

function templateSpellTexts(): string[] {
  const out: string[] = [];
  for (const lang of ['assemblyscript', 'rust']) {
    const dir = join(templatesDir(), lang, 'spells');
    for (const f of readdirSync(dir).sort())
      if (f.endsWith('.yaml') && !f.includes('private'))
        out.push(
          readFileSync(join(dir, f), 'utf8')
            .replace(/\$\{in_utxo_\d+\}/g, `${SEED_TXID}:1`)
            .replace(/\$\{dest_\d+\}/g, '0014' + '11'.repeat(20))
            .replace(/\$\{amount_\d+\}/g, '1000')
            .replace(/\$\{app_id\}|\$\{app_vk\}/g, SEED_B32)
            .replace(/\$\{[a-z_0-9]+\}/g, 'x')
            .replace(/\{\{[A-Z_]+\}\}/g, 'TOAD'),
        );
  }
  return out;
}

function sharedChainTxs(suffix: string): Uint8Array[] {
  if (!hasShared) return [];
  const dir = sharedPath('vectors', 'chain');
  return readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => fromHex(readFileSync(join(dir, f), 'utf8').trim()));
}

/** The `(spell, proof)` payloads of the shared chain transactions (OP_RETURN and Cardano datum). */
function sharedSpellPayloads(): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const tx of sharedChainTxs('.bitcoin.hex'))
    try {
      out.push(opReturnSpellPayload(parseTx(tx)));
    } catch {
      // a witness-era spell or none
    }
  for (const tx of sharedChainTxs('.cardano.hex'))
    try {
      out.push(findSpellPayload(parseOutputs(parseCardanoTx(tx))));
    } catch {
      // no spell
    }
  return out;
}

function sharedProveRequests(): { json: string[]; cbor: Uint8Array[] } {
  if (!hasShared) return { json: [], cbor: [] };
  const v = JSON.parse(readFileSync(sharedPath('vectors', 'prove-request-vectors.json'), 'utf8'));
  return { json: [v.full_request_json_text], cbor: [fromHex(v.full_request_cbor_hex)] };
}

/** Spell-payload-like CBOR values and assorted shapes (tags, floats, indefinite lengths). */
function cborSeeds(): Uint8Array[] {
  const seeds = templateSpells().map((t) => encodeCbor(spellToValue(parseSpellText(t), false)));
  seeds.push(
    encodeCbor([1n, -5n, 1.5, 'text', new Uint8Array([1, 2, 3]), null, true, undefined]),
    encodeCbor(
      new ValueMap([
        ['a', [new Tagged(24n, new Uint8Array([0x82, 1, 2]))]],
        [1n << 70n, 0.1],
      ]),
    ),
    fromHex('9f5f4201024103ff7f6161ff bf6161f5ff ff'.replace(/ /g, '')),
  );
  return seeds;
}

/** YAML/JSON-aware text mutation: structural tokens, anchors/aliases, tags, indentation. */
const YAML_TOKENS = [
  '[',
  ']',
  '{',
  '}',
  '- ',
  ': ',
  '\n',
  '\n  ',
  '  ',
  '&a ',
  '*a',
  '&b [*a, *a]',
  '!tag ',
  '!!int ',
  '!!binary ',
  '"',
  "'",
  '|\n ',
  '>\n ',
  '#',
  '---\n',
  '...\n',
  '? ',
  ',',
  '~',
  '0x',
  '1e999',
  '-0',
  '\\u0000',
  '\t',
  '%YAML 1.2\n',
  '<<: *a\n',
];
function mutateText(rng: Rng, input: Uint8Array, pool: readonly Uint8Array[]): Uint8Array {
  if (rng.int(3) === 0) return mutateBytes(rng, input, pool);
  const s = dec.decode(input);
  let out = s;
  for (let k = 0, n = 1 + rng.int(3); k < n; k++) {
    const i = rng.int(out.length + 1);
    switch (rng.int(4)) {
      case 0:
        out = out.slice(0, i) + rng.pick(YAML_TOKENS) + out.slice(i);
        break;
      case 1:
        out = out.slice(0, i) + out.slice(i + 1 + rng.int(8));
        break;
      case 2: {
        // duplicate a line
        const lines = out.split('\n');
        const j = rng.int(lines.length);
        lines.splice(rng.int(lines.length), 0, lines[j]!);
        out = lines.join('\n');
        break;
      }
      default:
        out = out.slice(0, i) + String.fromCharCode(rng.int(128)) + out.slice(i);
    }
  }
  return enc.encode(out);
}

async function wasmSeeds(extra: Uint8Array[] = []): Promise<Uint8Array[]> {
  const seeds = FUEL_VECTORS.map((v) => fromHex(v.hex));
  for (const name of ['compute', 'echo-stderr', 'random-and-env', 'recursion', 'versioned', 'proc-exit', 'trap-div-zero', 'infinite-loop'])
    seeds.push(await compileWatFixture(name));
  const { templateApp } = await import('../fixtures.js');
  seeds.push((await templateApp()).wasm);
  return [...seeds, ...extra];
}

export interface TargetOptions {
  /** Extra wasm modules to mutate (e.g. real app binaries). */
  wasm?: Uint8Array[];
}

/** Small blocks of the vector transactions (three or four each, after a coinbase). */
function vectorBlocks(): Uint8Array[] {
  const txs = sharedChainTxs('.bitcoin.hex');
  const out: Uint8Array[] = [];
  for (let i = 0; i < txs.length; i += 3) out.push(serializeBlock({ prevHash: '00'.repeat(32), time: i }, [coinbase(i, 0), ...txs.slice(i, i + 3)]));
  return out;
}

export function fuzzTargets(opts: TargetOptions = {}): FuzzTarget[] {
  return [
    { name: 'cbor', seeds: cborSeeds, run: (b) => decodeCbor(b) },
    {
      // Ogmios nextBlock frames as the Cardano index's client reads them
      name: 'ogmios-frame',
      seeds: () =>
        sharedChainTxs('.cardano.hex')
          .map((tx) =>
            enc.encode(
              JSON.stringify({
                jsonrpc: '2.0',
                method: 'nextBlock',
                id: 1,
                result: {
                  direction: 'forward',
                  tip: { slot: 9, id: 'aa'.repeat(32), height: 3 },
                  block: {
                    type: 'praos',
                    era: 'conway',
                    id: 'aa'.repeat(32),
                    ancestor: 'bb'.repeat(32),
                    height: 3,
                    slot: 9,
                    transactions: [{ id: 'cc'.repeat(32), cbor: Buffer.from(tx).toString('hex') }],
                  },
                },
              }),
            ),
          )
          .concat([enc.encode('{"jsonrpc":"2.0","method":"nextBlock","result":{"direction":"backward","point":"origin","tip":"origin"}}')]),
      run: (b) => decodeNextBlock(decodeFrame(dec.decode(b)).result),
    },
    {
      name: 'bitcoin-tx',
      seeds: () => sharedChainTxs('.bitcoin.hex'),
      run: (b) => {
        const tx = parseTx(b);
        let found;
        try {
          found = findBitcoinSpell(tx);
        } catch (e) {
          return e; // no spell is a normal answer for a transaction
        }
        return fillFromBitcoinTx(found.spell, tx);
      },
    },
    {
      // the index reads mempool transactions' inputs without the full parser
      name: 'tx-inputs',
      seeds: () => sharedChainTxs('.bitcoin.hex'),
      run: (b) => spentOutpoints(b),
    },
    {
      // the index's block path: the offset walker and in-place hashing, the spell prefilter,
      // the inputs read in place (a mutant mostly fails the merkle check; header mutants pass)
      name: 'bitcoin-block',
      seeds: () => vectorBlocks(),
      run: async (b) => {
        const w = await blockWrite(parseBlock(b), 1, async (raws) => raws.map(() => undefined));
        const inputs = w.inputs as BlockInputs;
        return Array.from({ length: inputs.length }, (_, i) => [inputs.digest(i), inputs.at(i)]);
      },
    },
    {
      name: 'cardano-tx',
      seeds: () => sharedChainTxs('.cardano.hex'),
      run: (b) => {
        const tx = parseCardanoTx(b);
        parseInputs(tx);
        parseRedeemers(tx);
        const outs = parseOutputs(tx);
        return decodeSpellAndProof(findSpellPayload(outs));
      },
    },
    {
      // the spell decoder on the encodings ciborium reads its own way (fuzz/cbor-mutate.ts), then
      // the re-encoding the proof commits to. (Reading that re-encoding back need not give the same
      // spell, in the reference too: a tag 2 on chunked bytes stays a tag in Data and is written as a
      // definite byte string, which then reads as an integer.) Verdicts per class are asserted
      // against the reference's reading in model/ciborium.test.ts.
      name: 'spell-payload',
      seeds: () => [...sharedSpellPayloads(), ...templateSpells().map((t) => encodeCbor([spellToValue(parseSpellText(t), false), [1n, 2n]]))],
      mutate: mutateCborStructure,
      run: (b) => encodeSpellCbor(decodeSpellAndProof(b).spell),
    },
    {
      name: 'spell-yaml',
      seeds: () => templateSpells().map((t) => enc.encode(t)),
      mutate: mutateText,
      run: (b) => parseSpellText(dec.decode(b)),
    },
    {
      name: 'spell-json',
      seeds: () => templateSpells().map((t) => enc.encode(toJsonCompact(spellToValue(parseSpellText(t), true)))),
      mutate: mutateText,
      run: (b) => {
        const text = dec.decode(b);
        parseJson(text);
        return parseSpellText(text);
      },
    },
    {
      name: 'prove-request-json',
      seeds: () => [...sharedProveRequests().json.map((t) => enc.encode(t)), ...proveRequestSeeds(true)],
      mutate: mutateText,
      run: (b) => decodeProveRequest(b, 'json'),
    },
    {
      name: 'prove-request-cbor',
      seeds: () => [...sharedProveRequests().cbor, ...proveRequestSeeds(false)],
      run: (b) => decodeProveRequest(b, 'cbor'),
    },
    {
      name: 'wasm-module',
      seeds: () => wasmSeeds(opts.wasm),
      run: (b) => prepareModule(b, 1_000_000_000n, DEFAULT_RUNNER_LIMITS, undefined, silentLogger),
    },
  ];
}

/** ProveRequests built from the template spells (no shared files needed). */
function proveRequestSeeds(hr: boolean): Uint8Array[] {
  return templateSpells().map((t) => {
    const v = proveRequestToValue(
      {
        spell: parseSpellText(t),
        app_private_inputs: [],
        tx_ins_beamed_source_utxos: new Map(),
        binaries: [[fromHex(SEED_B32), new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])]],
        app_signatures: [],
        prev_txs: [],
        change_address: 'bc1qyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy',
        fee_rate: 2,
        chain: 'bitcoin',
      },
      hr,
    );
    return hr ? enc.encode(toJsonCompact(v)) : encodeCbor(v);
  });
}
