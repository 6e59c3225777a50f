import { readFileSync } from 'node:fs';
import { CharmsError } from '../errors.js';
import { debugOf } from '../settings/settings.js';
import type { CliContext } from './define.js';
import { commandTree } from './commands.js';
import { helpText, parseArgv } from './parse.js';
import { completeEnv } from './complete-env.js';
import { CURRENT_VERSION } from '../model/spell.js';

const pkgVersion = (): string => {
  try {
    return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
  } catch {
    return 'unknown';
  }
};

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Runs the CLI; never throws: errors become one line on stderr and a non-zero exit code. */
export async function main(binName: string, prover: boolean, argv = process.argv.slice(2)): Promise<number> {
  const ctx: CliContext = {
    prover,
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    env: process.env,
    cwd: process.cwd(),
    readStdin,
  };
  const root = commandTree(binName);
  const fail = (e: unknown, code: number): number => {
    const msg = e instanceof CharmsError ? e.fullMessage : e instanceof Error ? e.message : String(e);
    ctx.stderr(`Error: ${msg.replace(/\s*\n\s*/g, ' ')}\n`);
    if (debugOf(ctx.env) && e instanceof Error) ctx.stderr(`${e.stack}\n`);
    return code;
  };
  // `COMPLETE=<shell> charms [-- words…]`: dynamic completions (clap_complete's CompleteEnv)
  try {
    const out = completeEnv(root, argv, ctx.env, ctx.cwd, { script: process.argv[1] ?? binName, node: process.execPath });
    if (out !== undefined) {
      ctx.stdout(out);
      return 0;
    }
  } catch (e) {
    return fail(e, 2);
  }
  let r: ReturnType<typeof parseArgv>;
  try {
    r = parseArgv(root, argv);
  } catch (e) {
    return fail(e, 2); // usage error, as clap
  }
  try {
    if (r.version) {
      // scripts check the protocol version the tools speak, not only the package version
      ctx.stdout(`${binName} ${pkgVersion()} (Charms protocol version ${CURRENT_VERSION})\n`);
      return 0;
    }
    const cmd = r.path[r.path.length - 1]!;
    if (r.missingSubcommand) {
      ctx.stderr(helpText(r.path)); // as clap's arg_required_else_help: help on stderr, exit 2
      return 2;
    }
    if (r.help || !cmd.run) {
      ctx.stdout(helpText(r.path));
      return 0;
    }
    return (await cmd.run(r.parsed, ctx)) ?? 0;
  } catch (e) {
    return fail(e, 1);
  }
}

/** Entry used by the bin scripts: flushes output before exiting. */
export function runMain(binName: string, prover: boolean): void {
  main(binName, prover).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`Error: ${String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
