/**
 * `spell check`-style runs of the published apps (toad-token, eBTC, bro-token; third-party
 * binaries, never committed) for `npm run test:apps`: each scenario's stdin `[App, Transaction,
 * x, w]` is built here; the fuel real wasmi 1.1.0 consumed on it is a committed fact in
 * vectors/runner-fuel/apps.json. The scenarios follow ../shared/protocol/app-runner.md §3.1.
 */
import { appStdin, type AppTransaction } from '../../checker/app-input.js';
import { ValueMap } from '../../codec/value.js';
import { utxoIdFromString, type App, type Data } from '../../model/primitives.js';
import type { Charms, NativeOutput } from '../../model/spell.js';
import { fromHex } from '../../util/bytes.js';
import { sha256 } from '../../util/sha256.js';

/** The published binaries: file name in the apps folder and SHA-256 (= the simple app's vk). */
export const APP_BINARIES = {
  'toad-token': '2d4c08e7f197c8e8dce161dd63255565c22e43a9c83b04e49707b8a78223867d',
  ebtc: 'fd0cac892e457454be0212fa7d9a0e1517d5bd6a33aa7c66a1f10f55e375c290',
  'bro-token': 'c975d4e0c292fb95efbda5c13312d6ac1d8b5aeff7f0f1e5578645a2da70ff5f',
} as const;

export type AppBinary = keyof typeof APP_BINARIES;

export interface AppScenario {
  name: string;
  binary: AppBinary;
  stdin: Uint8Array;
}

const UTXO = 'dc78b09d767c8565c4a58a95e7ad5ee22b28fc1685535056a395dc94929cdd5f:1';
const enc = new TextEncoder();
const app = (tag: string, identity: Uint8Array, binary: AppBinary): App => ({ tag, identity, vk: fromHex(APP_BINARIES[binary]) });
const map = (entries: [string, Data][]): ValueMap => new ValueMap(entries);
const tx = (t: Partial<AppTransaction> & Pick<AppTransaction, 'ins' | 'outs' | 'appPublicInputs'>): AppTransaction => ({ refs: [], prevTxs: [], ...t });
const coin = (amount: number, dest: Uint8Array): NativeOutput => ({ amount: BigInt(amount), dest });

function toad(): AppScenario[] {
  const identity = sha256(enc.encode(UTXO));
  const nft = app('n', identity, 'toad-token');
  const token = app('t', identity, 'toad-token');
  const nftState = (remaining: number): Charms => [
    [
      nft,
      map([
        ['ticker', 'TOAD'],
        ['remaining', BigInt(remaining)],
      ]),
    ],
  ];
  const mintNft = tx({ ins: [[utxoIdFromString(UTXO), []]], outs: [nftState(1000)], appPublicInputs: [[nft, null]] });
  const mintToken = (n: number): AppTransaction =>
    tx({
      ins: [[utxoIdFromString(`${UTXO.slice(0, 64)}:2`), nftState(1000)]],
      outs: [nftState(900), [[token, BigInt(n)]]],
      appPublicInputs: [
        [nft, null],
        [token, null],
      ],
    });
  return [
    { name: 'toad: NFT mint, w = "txid:vout"', binary: 'toad-token', stdin: appStdin(nft, mintNft, null, UTXO) },
    { name: 'toad: NFT mint, wrong w', binary: 'toad-token', stdin: appStdin(nft, mintNft, null, `${UTXO.slice(0, 64)}:7`) },
    { name: 'toad: token mint 100, remaining 1000 → 900', binary: 'toad-token', stdin: appStdin(token, mintToken(100), null, null) },
    { name: 'toad: token mint 101', binary: 'toad-token', stdin: appStdin(token, mintToken(101), null, null) },
    { name: 'toad: NFT app on the token mint', binary: 'toad-token', stdin: appStdin(nft, mintToken(100), null, null) },
  ];
}

function ebtc(): AppScenario[] {
  const identity = new Uint8Array(32).fill(7);
  const t = app('t', identity, 'ebtc');
  const c = app('c', identity, 'ebtc');
  const mint = (n: number): AppTransaction =>
    tx({
      ins: [[utxoIdFromString(UTXO), []]],
      outs: [[[t, BigInt(n)]], [[c, null]]],
      coinIns: [coin(5000, new Uint8Array(22).fill(1))],
      coinOuts: [coin(300, new Uint8Array(22).fill(2)), coin(1300, fromHex('00141ccbe7f8b1e364fe23110c9f720c2b5c2a37527e'))],
      appPublicInputs: [
        [c, null],
        [t, null],
      ],
    });
  return [
    { name: 'eBTC: mint 1000 against a 1300-sat vault output', binary: 'ebtc', stdin: appStdin(t, mint(1000), null, null) },
    { name: 'eBTC: mint 2000 (mismatch)', binary: 'ebtc', stdin: appStdin(t, mint(2000), null, null) },
    { name: 'eBTC: vault app (c)', binary: 'ebtc', stdin: appStdin(c, mint(1000), null, null) },
  ];
}

function bro(): AppScenario[] {
  const identity = sha256(enc.encode(UTXO));
  const nft = app('n', identity, 'bro-token');
  const mint = (content: ValueMap): AppTransaction => tx({ ins: [[utxoIdFromString(UTXO), []]], outs: [[[nft, content]]], appPublicInputs: [[nft, null]] });
  return [
    {
      name: 'bro: NFT mint, identity = SHA-256(utxo), {ticker, remaining} (refused)',
      binary: 'bro-token',
      stdin: appStdin(
        nft,
        mint(
          map([
            ['ticker', 'BRO'],
            ['remaining', 1000n],
          ]),
        ),
        null,
        UTXO,
      ),
    },
    { name: 'bro: NFT mint with bad content (refused)', binary: 'bro-token', stdin: appStdin(nft, mint(map([['name', 'x']])), null, UTXO) },
  ];
}

export const appScenarios = (): AppScenario[] => [...toad(), ...ebtc(), ...bro()];
