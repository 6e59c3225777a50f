// {{name}}: an NFT that controls the supply of a fungible token.
//
// - The NFT (`n/<identity>/<vk>`) carries `{ticker, remaining}`. It is minted by spending the UTXO
//   whose `txid:vout` string, passed as the private input `w`, hashes (SHA-256) to its identity.
// - The token (`t/<identity>/<vk>`, same identity and vk) can be minted only by spending the NFT
//   and lowering its `remaining` by exactly the amount minted. Plain transfers need no contract run.

import {
  App, Charms, Data, Kind, Transaction, NFT, TOKEN,
  charmValues, check, isSimpleTransfer, nftStatePreserved, run, sha256, sumTokenAmount, toHex,
  tokenAmountsBalanced,
} from "./charms";

export function _start(): void {
  run(contract);
}

function contract(app: App, tx: Transaction, x: Data, w: Data): bool {
  if (app.tag == NFT) return nftContract(app, tx, w);
  if (app.tag == TOKEN) return tokenContract(app, tx);
  return check(false, "unknown app tag " + app.tag);
}

function remainingOf(state: Data): u64 {
  const r = state.get("remaining");
  return r ? r.asU64() : 0;
}

function nftContract(app: App, tx: Transaction, w: Data): bool {
  if (nftStatePreserved(app, tx)) return true;
  const ins = charmValues(app, tx.ins);
  const outs = charmValues(app, tx.outs);
  if (ins.length == 0) {
    // Mint: w is the "txid:vout" of a spent input, and the identity is its SHA-256.
    if (!check(w.kind == Kind.Text, "w is the minting UTXO id (txid:vout)")) return false;
    const utxo = w.asString();
    if (!check(toHex(sha256(Uint8Array.wrap(String.UTF8.encode(utxo)))) == toHex(app.identity), "identity == sha256(w)"))
      return false;
    let spent = false;
    for (let i = 0; i < tx.insUtxos.length; i++) if (tx.insUtxos[i].toString() == utxo) spent = true;
    if (!check(spent, "the minting UTXO is spent")) return false;
    if (!check(outs.length == 1, "exactly one NFT is minted")) return false;
    const ticker = outs[0].get("ticker");
    return check(ticker != null && ticker.kind == Kind.Text, "the NFT has a ticker") &&
      check(outs[0].get("remaining") != null, "the NFT has a remaining supply");
  }
  // Supply update: one NFT in, one out, same ticker, remaining lowered by the tokens minted.
  if (!check(ins.length == 1 && outs.length == 1, "one NFT in and one out")) return false;
  const tin = ins[0].get("ticker");
  const tout = outs[0].get("ticker");
  if (!check(tin != null && tout != null && tin.equals(tout), "ticker unchanged")) return false;
  const token = new App(TOKEN, app.identity, app.vk);
  const minted = sumTokenAmount(token, tx.outs) - sumTokenAmount(token, tx.ins);
  return check(remainingOf(ins[0]) >= remainingOf(outs[0]), "remaining never grows") &&
    check(remainingOf(ins[0]) - remainingOf(outs[0]) == minted, "remaining decreases by the amount minted");
}

function tokenContract(app: App, tx: Transaction): bool {
  if (tokenAmountsBalanced(app, tx)) return true;
  const amountIn = sumTokenAmount(app, tx.ins);
  const amountOut = sumTokenAmount(app, tx.outs);
  if (!check(amountOut > amountIn, "tokens are never burned by this app")) return false;
  const nft = new App(NFT, app.identity, app.vk);
  const nftIn = charmValues(nft, tx.ins);
  const nftOut = charmValues(nft, tx.outs);
  if (!check(nftIn.length == 1 && nftOut.length == 1, "minting spends the controlling NFT")) return false;
  const allowed = remainingOf(nftIn[0]);
  return check(allowed >= remainingOf(nftOut[0]), "remaining never grows") &&
    check(allowed - remainingOf(nftOut[0]) == amountOut - amountIn, "minted amount == decrease of remaining");
}

// keep the compiler from dropping imports used only in some builds
export const _unused: Charms | null = null;
