import { spawnSync } from 'node:child_process';
import type { CommandDef } from '../define.js';
import { CharmsError } from '../../errors.js';
import { optFlag } from '../io.js';
import { ValueMap, type Value } from '../../codec/value.js';
import { parseJson, toJsonPretty } from '../../codec/json.js';
import { toYaml } from '../../codec/yaml.js';
import { extractAndVerifySpell } from '../../verify/index.js';
import { appToString } from '../../model/primitives.js';

/**
 * Lists the wallet's UTXOs that carry charms, via the node's CLI client (`bitcoin-cli`, or
 * `BITCOIN_CLI`; extra arguments such as `-testnet4` in `BITCOIN_CLI_ARGS`).
 */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const bin = ctx.env.BITCOIN_CLI || 'bitcoin-cli';
  const extra = (ctx.env.BITCOIN_CLI_ARGS ?? '').split(/\s+/).filter(Boolean);
  const cli = (...args: string[]): string => {
    const r = spawnSync(bin, [...extra, ...args], { encoding: 'utf8', env: ctx.env });
    if (r.error) throw new CharmsError('IO', `cannot run ${bin}: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message} (install Bitcoin Core or set BITCOIN_CLI)`);
    if (r.status !== 0) throw new CharmsError('UPSTREAM_UNAVAILABLE', `${bin} ${args[0]} failed: ${r.stderr.trim().split('\n')[0]}`);
    return r.stdout.trim();
  };
  const utxos = parseJson(cli('listunspent', '0'));
  if (!Array.isArray(utxos)) throw new CharmsError('UPSTREAM_UNAVAILABLE', 'listunspent did not return a list');
  const spells = new Map<string, ReturnType<typeof extractAndVerifySpell> | null>();
  const mock = optFlag(a, 'mock');
  const json = optFlag(a, 'json');
  let found = 0;
  for (const [i, u] of utxos.entries()) {
    if (!(u instanceof ValueMap)) continue;
    const txid = u.get('txid');
    const vout = u.get('vout');
    if (typeof txid !== 'string' || typeof vout !== 'bigint') continue;
    ctx.stderr(`checking ${i + 1}/${utxos.length} ${txid}:${vout}\n`);
    if (!spells.has(txid)) {
      try {
        spells.set(txid, extractAndVerifySpell({ bitcoin: cli('getrawtransaction', txid) }, mock));
      } catch (e) {
        if (e instanceof CharmsError && (e.code === 'IO' || e.code === 'UPSTREAM_UNAVAILABLE')) throw e;
        spells.set(txid, null);
      }
    }
    const spell = spells.get(txid);
    const charms = spell?.tx.outs[Number(vout)];
    if (!spell || !charms || charms.size === 0) continue;
    const amount = u.get('amount');
    const sats = typeof amount === 'number' ? BigInt(Math.round(amount * 1e8)) : typeof amount === 'bigint' ? amount * 100_000_000n : 0n;
    const entry = new ValueMap([
      ['utxo_id', `${txid}:${vout}`],
      ['confirmations', (u.get('confirmations') as Value) ?? 0n],
      ['sats', sats],
      ['charms', new ValueMap([...charms.entries()].map(([k, d]) => [appToString(spell.app_public_inputs[k]![0]), d]))],
    ]);
    ctx.stdout(json ? toJsonPretty(entry) + '\n' : `---\n${toYaml(entry)}`);
    found++;
  }
  ctx.stderr(`${found} UTXO(s) with charms\n`);
};
export default run;
