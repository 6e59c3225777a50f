import { spawnSync } from 'node:child_process';
import type { CommandDef, CliContext } from '../define.js';
import { CharmsError } from '../../errors.js';
import { optFlag } from '../io.js';
import { ValueMap, type Value } from '../../codec/value.js';
import { toJsonPretty } from '../../codec/json.js';
import { toYaml } from '../../codec/yaml.js';
import { isNoSpell, verifySpells } from '../../verify/index.js';
import { useFastProofBackend } from '../../proof/init.js';
import { nodeClientOf } from '../../settings/settings.js';
import { appToString } from '../../model/primitives.js';

/** One `listunspent` entry (the fields used). */
interface Unspent {
  txid: string;
  vout: number;
  amount: number;
  confirmations: number;
  solvable?: boolean;
}

/** Runs the node's CLI client: `BITCOIN_CLI` (default `bitcoin-cli`) with `BITCOIN_CLI_ARGS` (e.g. `-testnet4`) first. */
function nodeCli(ctx: CliContext) {
  const { bin, args: extra } = nodeClientOf(ctx.env);
  return (...args: string[]): { ok: true; out: string } | { ok: false; why: string } => {
    const r = spawnSync(bin, [...extra, ...args], { encoding: 'utf8', env: ctx.env, maxBuffer: 256 * 1024 * 1024 });
    if (r.error) {
      const code = (r.error as NodeJS.ErrnoException).code;
      throw new CharmsError('IO', `cannot run ${bin}: ${code ?? r.error.message}${code === 'ENOENT' ? ' (install Bitcoin Core or set BITCOIN_CLI)' : ''}`, { cause: r.error });
    }
    if (r.status !== 0) return { ok: false, why: (r.stderr.trim().split('\n')[0] ?? '') || `exit status ${r.status}` };
    return { ok: true, out: r.stdout.trim() };
  };
}

function parseUnspent(text: string): Unspent[] {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch (e) {
    throw new CharmsError('UPSTREAM_FAILED', 'listunspent did not answer JSON', { cause: e });
  }
  if (!Array.isArray(list)) throw new CharmsError('UPSTREAM_FAILED', 'listunspent did not answer a list');
  return list.map((u: Record<string, unknown>, i) => {
    if (typeof u?.txid !== 'string' || !Number.isInteger(u.vout) || typeof u.amount !== 'number')
      throw new CharmsError('UPSTREAM_FAILED', `listunspent entry ${i} lacks txid/vout/amount`);
    return {
      txid: u.txid,
      vout: u.vout as number,
      amount: u.amount,
      confirmations: typeof u.confirmations === 'number' ? u.confirmations : 0,
      ...(typeof u.solvable === 'boolean' ? { solvable: u.solvable } : {}),
    };
  });
}

/**
 * `wallet list [--json] [--mock]`: the wallet's UTXOs that carry charms, found through
 * `bitcoin-cli listunspent 0` and `bitcoin-cli getrawtransaction <txid>`. Like the reference:
 * transactions are visited in txid order with `Looking at tx <txid>...` on stderr; a transaction
 * that cannot be fetched or carries no valid spell is skipped; unsolvable UTXOs are skipped; each
 * match prints `{utxo_id, confirmations, sats, charms: {"<app>": data}}` as a YAML document after a
 * `---` line (followed by an empty line) or as pretty JSON. One deliberate difference: `sats` is
 * the amount rounded to the satoshi, where the reference truncates the float product (0.29 BTC
 * gave 28999999).
 */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const cli = nodeCli(ctx);
  const mock = optFlag(a, 'mock');
  const json = optFlag(a, 'json');
  const listed = cli('listunspent', '0');
  if (!listed.ok) throw new CharmsError('UPSTREAM_UNAVAILABLE', `bitcoin-cli listunspent failed: ${listed.why}`);
  const byTxid = new Map<string, Unspent[]>();
  for (const u of parseUnspent(listed.out)) byTxid.set(u.txid, [...(byTxid.get(u.txid) ?? []), u]);
  const fetched: { txid: string; hex: string }[] = [];
  for (const txid of [...byTxid.keys()].sort()) {
    ctx.stderr(`Looking at tx ${txid}...\n`);
    const raw = cli('getrawtransaction', txid);
    if (raw.ok) fetched.push({ txid, hex: raw.out });
  }
  // all spells verified together: one batched pairing check per verifying key; for more than a
  // few, loading the WASM pairing backend (≈60–100 ms) pays for itself
  if (fetched.length >= 8) await useFastProofBackend((m) => ctx.stderr(`${m}\n`));
  const verdicts = verifySpells(fetched.map((f) => ({ bitcoin: f.hex })), mock);
  for (const [i, { txid }] of fetched.entries()) {
    const verdict = verdicts[i]!;
    if (!verdict.ok) {
      // no valid spell, or the node's answer is no transaction: skipped, as the reference
      if (isNoSpell(verdict.error) || verdict.error.code === 'INVALID_TX') continue;
      throw verdict.error;
    }
    const spell = verdict.spell;
    for (const u of byTxid.get(txid)!) {
      if (u.solvable === false) continue;
      const charms = spell.tx.outs[u.vout];
      if (!charms || charms.size === 0) continue;
      const named = [...charms.entries()]
        .filter(([k]) => k < spell.app_public_inputs.length)
        .map(([k, d]): [string, Value] => [appToString(spell.app_public_inputs[k]![0]), d])
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
      const entry = new ValueMap([
        ['utxo_id', `${txid}:${u.vout}`],
        ['confirmations', BigInt(u.confirmations)],
        ['sats', BigInt(Math.round(u.amount * 1e8))],
        ['charms', new ValueMap(named)],
      ]);
      ctx.stdout(json ? `${toJsonPretty(entry)}\n` : `---\n${toYaml(entry)}\n`);
    }
  }
};
export default run;
