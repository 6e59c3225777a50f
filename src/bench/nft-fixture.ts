/**
 * What the proving benchmarks spend: the template app's NFT minted (mock-proved, from the funding
 * vector) and the 2-app spend of it that also mints its token.
 */
import { sha256 } from '../util/sha256.js';
import { readSharedText } from '../testing/shared.js';
import { bitcoinProveRequest, funding, identityFor, templateApp } from '../testing/fixtures.js';
import { proveSpellTx } from '../prover/prove.js';
import { MockBackend } from '../prover/backend.js';
import { appFromString } from '../model/primitives.js';
import { shutdownRunner } from '../runner/index.js';
import { parseTx, txidHex } from '../bitcoin/tx.js';
import { fromHex } from '../util/bytes.js';

/** `appOf`: the app binary to use (default: the template app as built). */
export async function nftFixture(appOf: () => Promise<{ wasm: Uint8Array; vk: string; path: string }> = templateApp) {
  const app = await appOf();
  const f = funding(readSharedText);
  const in0 = `${f.txid}:0`;
  const id = identityFor(in0);
  const nft = `n/${id}/${app.vk}`;
  const tok = `t/${id}/${app.vk}`;
  const coin = `{amount: 1000, dest: ${f.dest}}`;
  const bins: [Uint8Array, Uint8Array][] = [[sha256(app.wasm), app.wasm]];
  /** Mint transactions (hex), each with its own remaining supply so each has its own txid. */
  const mint = async (count: number): Promise<string[]> => {
    const out: string[] = [];
    for (let k = 0; k < count; k++) {
      const spell = `version: 15\ntx:\n  ins: [${in0}]\n  outs:\n  - 0: {ticker: B, remaining: ${100000 + k}}\n  coins: [${coin}]\napp_public_inputs:\n  ${nft}: ~\n`;
      const r = await proveSpellTx(bitcoinProveRequest(f, spell, [f.hex], { app_private_inputs: [[appFromString(nft), in0]], binaries: bins }), {
        backend: new MockBackend(),
      });
      out.push(r.txs[0]!.hex);
    }
    await shutdownRunner();
    return out;
  };
  /** The 2-app spend of mint `tx1` (its NFT kept, 69 420 tokens minted), as spell YAML. */
  const spendYaml = (tx1: string, k = 0): string =>
    `version: 15\ntx:\n  ins: [${txidHex(parseTx(fromHex(tx1)))}:0, ${f.txid}:1]\n  outs:\n  - 0: {ticker: B, remaining: ${30580 + k}}\n  - 1: 69420\n  coins: [${coin}, ${coin}]\napp_public_inputs:\n  ${nft}: ~\n  ${tok}: ~\n`;
  return { app, f, bins, mint, spendYaml };
}
