/**
 * The candid interface of the two Scrolls canisters, written here for the methods we call (the
 * reference's `scrolls_cardano.did` and `scrolls_bitcoin.did`). All of them are update calls: the
 * answer comes back in a certificate signed by the subnet, which the agent verifies.
 *
 *   scrolls_cardano:  sign : (text) -> (variant { Ok : text; Err : text })
 *                     certify_final : (text) -> (variant { Ok : text; Err : text })
 *   scrolls_bitcoin:  addresses : (text, vec nat32) ->
 *                       (variant { Ok : record { signature : text;
 *                                               script_pubkeys : vec record { nat32; text } };
 *                                  Err : text })
 */
import { IDL } from '@icp-sdk/core/candid';

const TextResult = IDL.Variant({ Ok: IDL.Text, Err: IDL.Text });

const Addresses = IDL.Record({
  signature: IDL.Text,
  script_pubkeys: IDL.Vec(IDL.Tuple(IDL.Nat32, IDL.Text)),
});

const AddressesResult = IDL.Variant({ Ok: Addresses, Err: IDL.Text });

export interface MethodIdl {
  args: IDL.Type[];
  ret: IDL.Type;
}

export const CARDANO_METHODS = {
  sign: { args: [IDL.Text], ret: TextResult },
  certify_final: { args: [IDL.Text], ret: TextResult },
} satisfies Record<string, MethodIdl>;

export const BITCOIN_METHODS = {
  addresses: { args: [IDL.Text, IDL.Vec(IDL.Nat32)], ret: AddressesResult },
} satisfies Record<string, MethodIdl>;

/** Decoded candid results. */
export type TextResultValue = { Ok: string } | { Err: string };
export type AddressesResultValue = { Ok: { signature: string; script_pubkeys: [number, string][] } } | { Err: string };
