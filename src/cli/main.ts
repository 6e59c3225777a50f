import { readFileSync } from 'node:fs';
import { CharmsError } from '../errors.js';
import { debugOf } from '../settings/settings.js';
import type { CommandDef } from './define.js';
import { renderOutput } from './output.js';
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

/** The process's streams and surroundings, as `main` uses them (tests pass their own). */
export interface CliIo {
  stdout: (s: string | Uint8Array) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  readStdin: () => Promise<Uint8Array>;
}

const processIo = (): CliIo => ({
  stdout: (s) => void process.stdout.write(s),
  stderr: (s) => void process.stderr.write(s),
  env: process.env,
  cwd: process.cwd(),
  readStdin,
});

/** Runs the CLI; never throws: errors become one line on stderr and a non-zero exit code. */
export function main(binName: string, prover: boolean, argv = process.argv.slice(2), io: CliIo = processIo()): Promise<number> {
  return runCli(commandTree(binName), argv, { ...io, prover }, { script: process.argv[1] ?? binName, node: process.execPath });
}

/**
 * Parses `argv` against the tree, runs the command and prints what it returns (`output.ts`) on
 * stdout; returns the exit code: the output's (default 0), 1 for an error, 2 for a usage error
 * (clap's). `self` is how completion scripts call this program back.
 */
export async function runCli(root: CommandDef, argv: string[], io: CliIo & { prover: boolean }, self: { script: string; node: string }): Promise<number> {
  const { stdout, ...ctx } = io;
  const binName = root.name;
  const fail = (e: unknown, code: number): number => {
    const msg = e instanceof CharmsError ? e.fullMessage : e instanceof Error ? e.message : String(e);
    ctx.stderr(`Error: ${msg.replace(/\s*\n\s*/g, ' ')}\n`);
    if (debugOf(ctx.env) && e instanceof Error) ctx.stderr(`${e.stack}\n`);
    return code;
  };
  // `COMPLETE=<shell> charms [-- words…]`: dynamic completions (clap_complete's CompleteEnv)
  try {
    const out = completeEnv(root, argv, ctx.env, ctx.cwd, self);
    if (out !== undefined) {
      stdout(out);
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
      stdout(`${binName} ${pkgVersion()} (Charms protocol version ${CURRENT_VERSION})\n`);
      return 0;
    }
    const cmd = r.path[r.path.length - 1]!;
    if (r.missingSubcommand) {
      ctx.stderr(helpText(r.path)); // as clap's arg_required_else_help: help on stderr, exit 2
      return 2;
    }
    if (r.help || !cmd.run) {
      stdout(helpText(r.path));
      return 0;
    }
    const output = await cmd.run(r.parsed, ctx);
    if (!output) return 0;
    // rendered in full before anything is written: an output that cannot be printed is an error with nothing on stdout
    stdout(renderOutput(output));
    return output.exitCode ?? 0;
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
