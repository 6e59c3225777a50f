//! {{name}}: an NFT `{ticker, remaining}` that controls the supply of a fungible token.
//!
//! - The NFT (`n/<identity>/<vk>`) is minted by spending the UTXO whose `txid:vout` string,
//!   given as the private input `w`, hashes (SHA-256) to the app identity.
//! - The token (`t/<identity>/<vk>`) is minted only by spending the NFT and lowering its
//!   `remaining` by exactly the amount minted. Plain transfers need no contract run.

use charms_sdk::data::{
    App, Data, NFT, TOKEN, Transaction, UtxoId, charm_values, check, nft_state_preserved,
    sum_token_amount, token_amounts_balanced,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NftState {
    pub ticker: String,
    pub remaining: u64,
}

pub fn app_contract(app: &App, tx: &Transaction, _x: &Data, w: &Data) -> bool {
    match app.tag {
        NFT => nft_contract(app, tx, w),
        TOKEN => token_contract(app, tx),
        _ => false,
    }
}

fn states(app: &App, charms: impl Iterator<Item = Data>) -> Option<Vec<NftState>> {
    charms.map(|d| d.value::<NftState>().ok()).collect()
}

fn nft_contract(app: &App, tx: &Transaction, w: &Data) -> bool {
    if nft_state_preserved(app, tx) {
        return true;
    }
    let ins: Vec<Data> = charm_values(app, tx.ins.iter().map(|(_, c)| c)).cloned().collect();
    let outs: Vec<Data> = charm_values(app, tx.outs.iter()).cloned().collect();
    let Some(outs) = states(app, outs.into_iter()) else { return false };
    if ins.is_empty() {
        // mint
        let Ok(utxo_str) = w.value::<String>() else { return false };
        let Ok(utxo) = utxo_str.parse::<UtxoId>() else { return false };
        check!(Sha256::digest(utxo_str.as_bytes()).as_slice() == app.identity.0.as_slice());
        check!(tx.ins.iter().any(|(u, _)| u == &utxo));
        check!(outs.len() == 1);
        return true;
    }
    let Some(ins) = states(app, ins.into_iter()) else { return false };
    check!(ins.len() == 1 && outs.len() == 1);
    check!(ins[0].ticker == outs[0].ticker);
    check!(ins[0].remaining >= outs[0].remaining);
    let token = App { tag: TOKEN, identity: app.identity.clone(), vk: app.vk.clone() };
    let minted = minted_amount(&token, tx);
    check!(minted == Some(ins[0].remaining - outs[0].remaining));
    true
}

fn minted_amount(token: &App, tx: &Transaction) -> Option<u64> {
    let amount_in = sum_token_amount(token, tx.ins.iter().map(|(_, c)| c)).ok()?;
    let amount_out = sum_token_amount(token, tx.outs.iter()).ok()?;
    amount_out.checked_sub(amount_in)
}

fn token_contract(app: &App, tx: &Transaction) -> bool {
    if token_amounts_balanced(app, tx) {
        return true;
    }
    let Some(minted) = minted_amount(app, tx) else { return false };
    let nft = App { tag: NFT, identity: app.identity.clone(), vk: app.vk.clone() };
    let ins: Vec<Data> = charm_values(&nft, tx.ins.iter().map(|(_, c)| c)).cloned().collect();
    let outs: Vec<Data> = charm_values(&nft, tx.outs.iter()).cloned().collect();
    let (Some(ins), Some(outs)) = (states(&nft, ins.into_iter()), states(&nft, outs.into_iter())) else {
        return false;
    };
    check!(ins.len() == 1 && outs.len() == 1);
    check!(ins[0].remaining >= outs[0].remaining);
    check!(ins[0].remaining - outs[0].remaining == minted);
    true
}
