/**
 * Where the Scrolls canisters live. Defaults are the protocol's mainnet canisters on the Internet
 * Computer (the reference hard-codes them); each can be overridden from the environment, e.g. to
 * point at a local replica running copies of the canisters.
 */
import { Principal } from '@icp-sdk/core/principal';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { redactUrl } from '../util/redact.js';
import { ENV_NAMES, envValue, type Env } from './env.js';

export const SCROLLS_DEFAULTS = {
  host: 'https://ic0.app',
  /** `scrolls_cardano`: `sign`, `certify_final`. */
  cardanoCanisterId: 'tty7k-waaaa-aaaak-qvngq-cai',
  /** `scrolls_bitcoin_v15`: `addresses` (signed scriptPubKeys for Scrolls outputs). */
  bitcoinCanisterId: 'rpgc6-oqaaa-aaaak-qy3uq-cai',
} as const;

/** The environment names of the Scrolls settings (rows of `ENV_NAMES`). */
const SCROLLS_ENV = {
  host: ENV_NAMES.scrollsHost[0],
  cardanoCanisterId: ENV_NAMES.scrollsCardanoCanisterId[0],
  bitcoinCanisterId: ENV_NAMES.scrollsBitcoinCanisterId[0],
  rootKey: ENV_NAMES.scrollsRootKey[0],
} as const;

export interface ScrollsSettings {
  /** Internet Computer API host (boundary node or local replica). */
  host: string;
  cardanoCanisterId: string;
  bitcoinCanisterId: string;
  /**
   * DER-encoded root key that certificates must verify against. Absent: the IC mainnet root key
   * built into the agent (the only choice for `ic0.app`); a local replica has its own.
   */
  rootKey?: Uint8Array;
}

const config = (msg: string, cause?: unknown) => new CharmsError('CONFIG', msg, cause === undefined ? undefined : { cause });

function canisterId(v: string, name: string): string {
  try {
    return Principal.fromText(v).toText();
  } catch (e) {
    throw config(`${name} is not a canister id (like ${SCROLLS_DEFAULTS.cardanoCanisterId}): ${JSON.stringify(v)}`, e);
  }
}

/** Settings from the environment; unset or empty variables keep the defaults. */
export function scrollsSettings(env: Env): ScrollsSettings {
  const get = (k: keyof typeof SCROLLS_ENV) => envValue(env, [SCROLLS_ENV[k]]);
  const host = get('host') ?? SCROLLS_DEFAULTS.host;
  let url: URL;
  try {
    url = new URL(host);
  } catch (e) {
    throw config(`${SCROLLS_ENV.host} is not a URL: ${JSON.stringify(redactUrl(host))}`, e);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw config(`${SCROLLS_ENV.host} must be an http(s) URL, got ${url.protocol}`);
  const s: ScrollsSettings = {
    host,
    cardanoCanisterId: canisterId(get('cardanoCanisterId') ?? SCROLLS_DEFAULTS.cardanoCanisterId, SCROLLS_ENV.cardanoCanisterId),
    bitcoinCanisterId: canisterId(get('bitcoinCanisterId') ?? SCROLLS_DEFAULTS.bitcoinCanisterId, SCROLLS_ENV.bitcoinCanisterId),
  };
  const rootKey = get('rootKey');
  if (rootKey !== undefined) {
    try {
      s.rootKey = fromHex(rootKey, SCROLLS_ENV.rootKey);
    } catch (e) {
      throw config(`${SCROLLS_ENV.rootKey} must be the replica's DER root key in hex`, e);
    }
  }
  return s;
}

/** A description safe to log (no credentials in the host URL). */
export const describeScrolls = (s: ScrollsSettings): Record<string, unknown> => ({
  host: redactUrl(s.host),
  cardano_canister: s.cardanoCanisterId,
  bitcoin_canister: s.bitcoinCanisterId,
  root_key: s.rootKey ? 'custom' : 'ic-mainnet',
});
