/**
 * The local stand-in for the Containerfile's `BASE` (no image registry is reachable here): an
 * image laid out as the official `node:20-bookworm-slim`, made from the package registries only.
 * - `debootstrap --variant=minbase bookworm` from the Debian mirror this machine's apt uses (read
 *   from /etc/apt/sources.list and sources.list.d at run time), with that mirror's bookworm suites
 *   as the image's apt sources;
 * - Node from the npm registry's `node-linux-<arch>` package at the running Node's version (as
 *   .ci/run fetches runtimes), `bin/node` in /usr/local/bin and its headers in
 *   /usr/local/include/node; npm from the registry's `npm` package at the running npm's version in
 *   /usr/local/lib/node_modules/npm with the `npm`/`npx` links, as the official image has them;
 * - the machine's CA bundle copied to /etc/ssl/host-ca/ca-certificates.crt (a path Debian's
 *   ca-certificates never regenerates) and `NODE_EXTRA_CA_CERTS` pointing at it, so `npm ci` in a
 *   build reaches the registry through a TLS-inspecting proxy. Only this base has it: the
 *   product's Containerfile does not refer to it;
 * - `podman import`.
 * The image is kept between runs, tagged by the Node and npm versions and the recipe's revision
 * (`localhost/charms-test-base:node-<v>-npm-<v>-r<n>`); older tags of it are removed when a new one
 * is made. CHARMS_CONTAINER_BASE_REBUILD=1 makes it again.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { podman, run } from './podman.js';

/** Bumped when the recipe below changes, so a cached base made by an older one is not reused. */
const RECIPE = 1;
const REPO = 'localhost/charms-test-base';
const CA_PATH = '/etc/ssl/host-ca/ca-certificates.crt';
const HOST_CA = '/etc/ssl/certs/ca-certificates.crt';
const SUITE = 'bookworm';

interface AptSource {
  uri: string;
  suites: string[];
}

/**
 * The Debian `deb` sources of `suite` (and its -updates, -security) in apt's one-line and deb822
 * formats; other suites and `deb-src` are left out.
 */
function debianSources(files: { name: string; text: string }[], suite = SUITE): AptSource[] {
  const ours = (s: string) => s === suite || s.startsWith(`${suite}-`);
  const out: AptSource[] = [];
  for (const f of files) {
    if (f.name.endsWith('.sources')) {
      for (const stanza of f.text.split(/\n\s*\n/)) {
        const field = (k: string) =>
          stanza
            .split('\n')
            .find((l) => l.toLowerCase().startsWith(`${k.toLowerCase()}:`))
            ?.slice(k.length + 1)
            .trim();
        if (field('Enabled') === 'no') continue;
        if (!(field('Types') ?? '').split(/\s+/).includes('deb')) continue;
        const suites = (field('Suites') ?? '').split(/\s+/).filter(ours);
        const components = (field('Components') ?? '').split(/\s+/);
        for (const uri of (field('URIs') ?? '').split(/\s+/).filter(Boolean)) if (suites.length && components.includes('main')) out.push({ uri, suites });
      }
    } else if (f.name.endsWith('.list')) {
      for (const raw of f.text.split('\n')) {
        const line = raw
          .replace(/#.*/, '')
          .replace(/\[[^\]]*\]/, '')
          .trim();
        const [type, uri, s, ...components] = line.split(/\s+/);
        if (type !== 'deb' || !uri || !s || !ours(s) || !components.includes('main')) continue;
        const seen = out.find((o) => o.uri === uri);
        if (seen) seen.suites.push(s);
        else out.push({ uri, suites: [s] });
      }
    }
  }
  return out;
}

function hostSources(): AptSource[] {
  const files: { name: string; text: string }[] = [];
  if (existsSync('/etc/apt/sources.list')) files.push({ name: 'sources.list', text: readFileSync('/etc/apt/sources.list', 'utf8') });
  const d = '/etc/apt/sources.list.d';
  if (existsSync(d)) for (const n of readdirSync(d).sort()) files.push({ name: n, text: readFileSync(join(d, n), 'utf8') });
  return debianSources(files);
}

const nodeArch = (): string => {
  if (process.arch === 'x64' || process.arch === 'arm64') return process.arch;
  throw new Error(`no node-linux package for ${process.arch}`);
};

/** The base image's reference, made (bounded: `timeoutMs`) unless a cached one of this key exists. */
export async function ensureBaseImage(o: { timeoutMs: number; log: (line: string) => void }): Promise<string> {
  const npmVersion = execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();
  const tag = `node-${process.versions.node}-npm-${npmVersion}-r${RECIPE}`;
  const ref = `${REPO}:${tag}`;
  const exists = (await podman(['image', 'exists', ref], { allowFail: true })).code === 0;
  if (exists && process.env.CHARMS_CONTAINER_BASE_REBUILD !== '1') {
    o.log(`base image ${ref}: cached`);
    return ref;
  }
  // made again: the image the tag leaves behind is removed below (else it stays, untagged)
  const replaced = exists ? (await podman(['image', 'inspect', '--format', '{{.Id}}', ref])).stdout.trim() : undefined;
  const deadline = Date.now() + o.timeoutMs;
  const left = () => Math.max(1000, deadline - Date.now());
  const sources = hostSources();
  const main = sources.find((s) => s.suites.includes(SUITE));
  if (!main) throw new Error(`no Debian ${SUITE} mirror in /etc/apt/sources.list*: the base image is made from the machine's apt mirror`);
  const work = mkdtempSync('/var/tmp/charms-base-');
  try {
    const root = join(work, 'root');
    o.log(`base image ${ref}: debootstrap --variant=minbase ${SUITE} from the apt mirror`);
    await run('debootstrap', ['--variant=minbase', SUITE, root, main.uri], { timeoutMs: left() });
    writeFileSync(join(root, 'etc/apt/sources.list'), sources.map((s) => `deb ${s.uri} ${s.suites.join(' ')} main\n`).join(''));
    // the host's apt reads its mirror without checking Release dates (a snapshot mirror): so does the image's
    const validUntil = execFileSync('apt-config', ['dump', 'Acquire::Check-Valid-Until'], { encoding: 'utf8' });
    if (/"false"/.test(validUntil)) writeFileSync(join(root, 'etc/apt/apt.conf.d/90charms-test-mirror'), 'Acquire::Check-Valid-Until "false";\n');
    // as the official slim image: no apt caches, no docs
    rmSync(join(root, 'var/cache/apt/archives'), { recursive: true, force: true });
    mkdirSync(join(root, 'var/cache/apt/archives/partial'), { recursive: true });
    rmSync(join(root, 'var/lib/apt/lists'), { recursive: true, force: true });
    mkdirSync(join(root, 'var/lib/apt/lists/partial'), { recursive: true });

    o.log(`base image ${ref}: node-linux-${nodeArch()}@${process.versions.node} and npm@${npmVersion} from the npm registry`);
    const local = join(root, 'usr/local');
    await run('npm', ['pack', '--silent', `node-linux-${nodeArch()}@${process.versions.node}`, `npm@${npmVersion}`], { cwd: work, timeoutMs: left() });
    const tgz = (prefix: string) => join(work, readdirSync(work).find((n) => n.startsWith(prefix) && n.endsWith('.tgz'))!);
    await run('tar', ['xzf', tgz('node-linux-'), '-C', local, '--strip-components=1', 'package/bin', 'package/include', 'package/share'], {
      timeoutMs: left(),
    });
    const npmDir = join(local, 'lib/node_modules/npm');
    mkdirSync(npmDir, { recursive: true });
    await run('tar', ['xzf', tgz('npm-'), '-C', npmDir, '--strip-components=1'], { timeoutMs: left() });
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'));
    if (!existsSync(join(local, 'include/node/node_api.h'))) throw new Error('the node-linux package has no headers in include/node');

    mkdirSync(join(root, 'etc/ssl/host-ca'), { recursive: true });
    copyFileSync(HOST_CA, join(root, CA_PATH.slice(1)));

    o.log(`base image ${ref}: podman import`);
    const tar = join(work, 'root.tar');
    await run('tar', ['-C', root, '--numeric-owner', '-cf', tar, '.'], { timeoutMs: left() });
    await podman(
      [
        'import',
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        `ENV NODE_VERSION=${process.versions.node}`,
        '--change',
        `ENV NODE_EXTRA_CA_CERTS=${CA_PATH}`,
        '--change',
        'CMD ["node"]',
        tar,
        ref,
      ],
      { timeoutMs: left() },
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  // older bases of this recipe: one cached base at a time
  const { stdout } = await podman(['images', '--format', '{{.Repository}}:{{.Tag}}', REPO], { allowFail: true });
  for (const old of stdout.split('\n').filter((r) => r && r !== ref)) await podman(['rmi', old], { allowFail: true });
  if (replaced && replaced !== (await podman(['image', 'inspect', '--format', '{{.Id}}', ref])).stdout.trim())
    await podman(['rmi', replaced], { allowFail: true });
  return ref;
}
