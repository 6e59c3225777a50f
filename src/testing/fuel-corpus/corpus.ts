/**
 * The committed fuel corpus (vectors/runner-fuel/corpus.json): modules, inputs and the fuel
 * real wasmi 1.1.0 consumed on them (tools/wasmi-oracle), and a runner for the oracle binary.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../shared.js';

type Verdict = 'ok' | 'trap' | 'out_of_fuel' | 'invalid';

export interface OracleResult {
  fuel: number;
  verdict: Verdict;
  error?: string;
}

export interface CorpusCase {
  name: string;
  /** Module bytes, hex. */
  wasm: string;
  /** Stdin bytes, hex (default empty). */
  stdin?: string;
  /** Fuel budget (default 1e9). */
  budget?: number;
  expect: OracleResult;
}

export interface Corpus {
  oracle: string;
  generated: string;
  cases: CorpusCase[];
}

export const corpusPath = (): string => join(repoRoot, 'vectors', 'runner-fuel', 'corpus.json');
const gapsPath = (): string => join(repoRoot, 'vectors', 'runner-fuel', 'known-gaps.json');

export const readCorpus = (): Corpus => JSON.parse(readFileSync(corpusPath(), 'utf8')) as Corpus;

/** Names of corpus cases whose cycles are known to differ from wasmi's, with our count then. */
export const readGaps = (): Record<string, number> => JSON.parse(readFileSync(gapsPath(), 'utf8')) as Record<string, number>;

const stdinSeed = (stdin: Uint8Array): string => createHash('sha256').update(stdin).digest('hex');

/** Runs modules on the oracle binary in one batch process. */
export function runOracle(oracle: string, items: { wasm: Uint8Array; stdin?: Uint8Array; budget?: number }[]): OracleResult[] {
  const dir = mkdtempSync(join(tmpdir(), 'wasmi-oracle-'));
  try {
    const lines = items.map((it, i) => {
      const m = join(dir, `${i}.wasm`);
      writeFileSync(m, it.wasm);
      const stdin = it.stdin ?? new Uint8Array(0);
      const s = join(dir, `${i}.stdin`);
      writeFileSync(s, stdin);
      return `${m}\t${s}\t${stdinSeed(stdin)}\t${it.budget ?? ''}`;
    });
    const r = spawnSync(oracle, ['--batch'], { input: `${lines.join('\n')}\n`, maxBuffer: 1 << 28, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`wasmi-oracle failed (${r.status}): ${r.stderr}`);
    const out = r.stdout.trim().split('\n').filter(Boolean);
    if (out.length !== items.length) throw new Error(`wasmi-oracle answered ${out.length} of ${items.length} modules: ${r.stderr}`);
    return out.map((l) => JSON.parse(l) as OracleResult);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
