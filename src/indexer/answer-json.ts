/**
 * The index API's JSON answers: the writer (exact big integers and charm data embedded as
 * printed, `RawJson`), the headers every answer carries, and how a client's `network` spelling is
 * matched. Below both the route table (routes.ts) and the routes (api.ts and the others).
 */
import type { Res } from '../infra/http.js';

/** A JSON text embedded as is (charm data printed by our codec, exact big integers). */
export class RawJson {
  constructor(readonly text: string) {}
}
export type J = string | number | boolean | null | RawJson | J[] | { [k: string]: J | undefined };

function write(v: J): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}:${write(x as J)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The headers of every JSON answer of the index API. */
export const JSON_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json', 'cache-control': 'no-store' };

export const ok = (body: J, status = 200): Res => ({ status, headers: { ...JSON_HEADERS }, body: write(body) });

/** Whether a `network` a client names (the explorer's and the wallet's spellings too) is `ours`. */
export function sameNetwork(asked: string, ours: string): boolean {
  const n = (x: string) => (x === 'main' || x === 'bitcoin' ? 'mainnet' : x === 'test' ? 'testnet' : x);
  return n(asked) === n(ours);
}
