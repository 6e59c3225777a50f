// Makes `npx charms` / `npx charms-prover` work inside this checkout right after `npm ci`:
// npm links the bins of dependencies into node_modules/.bin, but not the package's own.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const binDir = join(root, 'node_modules', '.bin');
mkdirSync(binDir, { recursive: true });
for (const [name, target] of Object.entries(pkg.bin ?? {})) {
  const file = join(root, target);
  if (!existsSync(file)) continue;
  chmodSync(file, 0o755);
  const link = join(binDir, name);
  rmSync(link, { force: true });
  symlinkSync(relative(binDir, file), link);
}
