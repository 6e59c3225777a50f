/**
 * The app templates as a new user meets them: secrets ignored by git, the README's commands run
 * as copied, and every example spell provable as shipped (with the tutorial's variables).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { parseTx, txidHex } from '../bitcoin/tx.js';
import { fromHex } from '../util/bytes.js';

const bin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));
const charms = (args: string[], cwd: string, input?: string) => spawnSync(process.execPath, [bin, ...args], { cwd, input, encoding: 'utf8' });

/** A directory with a `charms` command on it, as after `npm install -g`. */
function pathWithCharms(): string {
  const dir = mkdtempSync(join(tmpdir(), 'charms-path-'));
  writeFileSync(join(dir, 'charms'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
  chmodSync(join(dir, 'charms'), 0o755);
  return `${dir}:${process.env.PATH}`;
}

test('both templates: .gitignore keeps app keys (.charms/, .svc/) and build output out of git', () => {
  const root = mkdtempSync(join(tmpdir(), 'charms-tpl-'));
  for (const template of ['rust', 'assemblyscript']) {
    const name = `app-${template}`;
    assert.equal(charms(['app', 'new', name, '--template', template], root).status, 0);
    const dir = join(root, name);
    for (const secret of ['.charms/app-key.json', '.svc/app-key.json']) {
      mkdirSync(join(dir, secret, '..'), { recursive: true });
      writeFileSync(join(dir, secret), '{}');
      assert.equal(spawnSync('git', ['check-ignore', '-q', secret], { cwd: dir }).status, 0, `${template}: ${secret} is not ignored`);
    }
    const spells = ['mint-nft.yaml', 'mint-token.yaml', 'send.yaml'].map((f) => readFileSync(join(dir, 'spells', f), 'utf8')).join('\n');
    for (const v of ['app_id', 'app_vk', 'in_utxo_0', 'in_utxo_1', 'in_utxo_2', 'amount_0', 'dest_0', 'amount_4', 'dest_4'])
      assert.ok(spells.includes(`\${${v}}`), `${template}: \${${v}}`);
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /addr_0=/);
  }
});

test('AssemblyScript template: the README commands run as copied; mint-nft, mint-token and send prove as shipped', async (t) => {
  if (!sharedOrSkip(t)) return;
  const root = mkdtempSync(join(tmpdir(), 'charms-tpl-'));
  assert.equal(charms(['app', 'new', 'toad', '--template', 'assemblyscript'], root).status, 0);
  const dir = join(root, 'toad');
  const readme = readFileSync(join(dir, 'README.md'), 'utf8');
  // every shell block, in order; `npm install` needs the registry (the compiler comes with charms-ts here)
  const script = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1])
    .join('\n')
    .replace(/^npm install$/m, ': npm install');
  const env = { ...process.env, PATH: pathWithCharms() };
  const ran = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, encoding: 'utf8', env });
  assert.equal(ran.status, 0, ran.stderr);
  assert.match(ran.stderr, /cycles spent: \[\d+\]/);

  // the whole tutorial chain, proved with --mock: mint the NFT, mint tokens with it, send tokens
  // the README's variables, with the binary built above
  const setup = script.replace(/cat \.\/spells[\s\S]*$/, '').replace('app_bin=$(charms app build)', 'app_bin=build/app.wasm');
  const vars = (s: string) => spawnSync('bash', ['-euo', 'pipefail', '-c', `${setup}\n${s}`], { cwd: dir, encoding: 'utf8', env });
  const prev0 = readSharedText('vectors', 'chain', 'd8fa4cdade7ac3dff64047dc73b58591ebe638579881b200d4fea68fc84521f0.bitcoin.hex').trim();
  const prove = (spell: string, prev: string[], extra: string): string => {
    const r = vars(
      `${extra}\ncat ./spells/${spell} | envsubst | charms spell prove --mock ${spell === 'send.yaml' ? '' : '--app-bins=$app_bin'} ${prev.map((p) => `--prev-txs=${p}`).join(' ')} --change-address=$addr_0 ${spell === 'mint-nft.yaml' ? '--private-inputs=<(cat ./spells/mint-nft-private.yaml | envsubst)' : ''}`,
    );
    assert.equal(r.status, 0, `${spell}: ${r.stderr}`);
    assert.match(r.stderr, /mock mode: the proof is a MOCK proof/);
    return (JSON.parse(r.stdout) as { bitcoin: string }[])[0]!.bitcoin;
  };
  const tx1 = prove('mint-nft.yaml', [prev0], '');
  const id1 = txidHex(parseTx(fromHex(tx1)));
  const tx2 = prove('mint-token.yaml', [tx1], `export in_utxo_1=${id1}:0 amount_1=5000 dest_1=$dest_0 amount_2=1000 dest_2=$dest_0`);
  const id2 = txidHex(parseTx(fromHex(tx2)));
  prove('send.yaml', [tx2], `export in_utxo_2=${id2}:0 amount_3=546 dest_3=$dest_0 amount_4=546 dest_4=$dest_0`);

  // MOCK=1 in the environment does not turn `spell prove` into a mock proof (only --mock does):
  // the request goes to the proving service (a loopback fake here) and MOCK is named as ignored
  const spell = vars('cat ./spells/mint-nft.yaml | envsubst').stdout;
  let posted = 0;
  const fake = http.createServer((req, res) => {
    posted++;
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"fake prover","code":"INVALID_INPUT"}'));
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(fake.address() as { port: number }).port}/spells/prove`;
    const child = spawn(
      process.execPath,
      [
        bin,
        'spell',
        'prove',
        '--app-bins',
        join(dir, 'build', 'app.wasm'),
        '--prev-txs',
        prev0,
        '--change-address',
        'tb1p3w06fgh64axkj3uphn4t258ehweccm367vkdhkvz8qzdagjctm8qaw2xyv',
      ],
      {
        cwd: dir,
        env: { ...process.env, MOCK: '1', SVC_PROVE_API_URL: url },
      },
    );
    child.stdin.end(spell);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    assert.equal(code, 1);
    assert.equal(posted, 1, 'the request went to the proving service');
    assert.match(err, /MOCK is set but ignored by `spell prove`; pass --mock/);
    assert.doesNotMatch(err, /mock mode: the proof is a MOCK proof/);
    assert.equal(out, '');
  } finally {
    fake.close();
  }
});
