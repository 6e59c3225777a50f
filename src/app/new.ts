/**
 * `app new`: scaffold an app project from the templates shipped with this package
 * (`templates/rust`, `templates/assemblyscript`), then `git init` it.
 */
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CharmsError } from '../errors.js';

export type Template = 'rust' | 'assemblyscript';

export const templatesDir = (): string => resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'templates');

function substitute(dir: string, vars: Record<string, string>): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      substitute(p, vars);
      continue;
    }
    let text = readFileSync(p, 'utf8');
    for (const [k, v] of Object.entries(vars)) text = text.split(`{{${k}}}`).join(v);
    writeFileSync(p, text);
  }
}

export function newAppProject(target: string, template: Template): string {
  const name = basename(target);
  if (!/^[a-zA-Z][a-zA-Z0-9_-]*$/.test(name))
    throw new CharmsError('INVALID_INPUT', `app name ${JSON.stringify(name)}: use letters, digits, - and _ (starting with a letter)`);
  const dir = resolve(target);
  if (existsSync(dir)) throw new CharmsError('IO', `${dir} already exists`);
  const src = join(templatesDir(), template);
  if (!existsSync(src)) throw new CharmsError('IO', `template ${template} is missing from this installation (${src})`);
  cpSync(src, dir, { recursive: true });
  // npm drops files named .gitignore from packages: templates ship `gitignore`.
  if (existsSync(join(dir, 'gitignore'))) renameSync(join(dir, 'gitignore'), join(dir, '.gitignore'));
  substitute(dir, { name, crate: name.replace(/-/g, '_'), TICKER: name.replace(/[^a-zA-Z0-9]/g, '').toUpperCase() });
  const git = spawnSync('git', ['init', '-q'], { cwd: dir, stdio: 'ignore' });
  if (git.error || git.status !== 0) process.stderr.write('warning: git init failed; the project is not a git repository\n');
  return dir;
}
