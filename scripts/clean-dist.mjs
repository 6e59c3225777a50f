// Removes dist/ before a build: a module deleted or renamed in src/ must not leave its compiled
// copy (and its test, which `npm test` would still find and run) behind.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

rmSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'), { recursive: true, force: true });
