import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENV_NAMES, loadSettings, CURRENT_PROVE_API_URL, noBundleOf, runnerSettingsOf } from './settings.js';
import { CharmsError } from '../errors.js';

test('defaults with an empty environment', () => {
  const s = loadSettings({});
  assert.equal(s.mock, false);
  assert.equal(s.debug, false);
  assert.equal(s.logLevel, 'info');
  assert.equal(s.cacheUrl, undefined);
  const { scrolls, ...prover } = s.prover;
  assert.deepEqual(prover, {
    mock: false,
    appProver: 'cpu',
    spellProver: 'app',
    proveApiUrl: CURRENT_PROVE_API_URL,
    proofThreads: Math.min(4, availableParallelism()),
    artifactHosts: [],
  });
  assert.equal(s.metrics, 'public');
  assert.equal(loadSettings({ SVC_PROOF_THREADS: '0' }).prover.proofThreads, 0);
  for (const bad of ['-1', '65', '1.5', 'two'])
    assert.throws(
      () => loadSettings({ SVC_PROOF_THREADS: bad }),
      (e: unknown) => e instanceof CharmsError && e.code === 'CONFIG' && /SVC_PROOF_THREADS/.test(e.message),
    );
  assert.equal(scrolls.host, 'https://ic0.app');
  assert.deepEqual(s.nodeClient, { bin: 'bitcoin-cli', args: [] });
  assert.equal(s.querySource.esploraUrl, undefined);
});

test('spec names win over the reference aliases; aliases alone work', () => {
  for (const [key, names] of Object.entries(ENV_NAMES)) assert.ok(names.length >= 1, key);
  const both = loadSettings({ CACHE_URL: 'redis://a', REDIS_URL: 'redis://b', SVC_PROVE_API_URL: 'http://spec', CHARMS_PROVE_API_URL: 'http://ref' });
  assert.equal(both.cacheUrl, 'redis://a');
  assert.equal(both.prover.cacheUrl, 'redis://a');
  assert.equal(both.prover.proveApiUrl, 'http://spec');
  const refOnly = loadSettings({
    REDIS_URL: 'redis://b',
    APP_SP1_PROVER: 'network',
    SPELL_SP1_PROVER: 'network',
    SP1_GPU_SERVICE_URL: 'http://gpu',
    CHARMS_FEE_SETTINGS: '/f.yaml',
  });
  assert.equal(refOnly.cacheUrl, 'redis://b');
  assert.equal(refOnly.prover.appProver, 'network');
  assert.equal(refOnly.prover.spellProver, 'network');
  assert.equal(refOnly.prover.gpuServiceUrl, 'http://gpu');
  assert.equal(refOnly.prover.feeSettingsPath, '/f.yaml');
  // an empty value counts as unset
  assert.equal(loadSettings({ CACHE_URL: '', REDIS_URL: 'redis://b' }).cacheUrl, 'redis://b');
});

test('flags override the environment; MOCK can be ignored by a command', () => {
  const env = { MOCK: '1', ESPLORA_URL: 'http://env', BITCOIN_RPC_URL: 'http://rpc-env', BITCOIN_RPC_USER: 'u', BITCOIN_RPC_PASSWORD: '' };
  assert.equal(loadSettings(env).mock, true);
  assert.equal(loadSettings(env, { mockFromEnv: false }).mock, false);
  assert.equal(loadSettings({}, { mock: true, mockFromEnv: false }).mock, true);
  assert.equal(loadSettings({ MOCK: 'false' }).mock, false);
  const s = loadSettings(env, { esploraUrl: 'http://flag', rpcCookie: '/c' });
  assert.equal(s.querySource.esploraUrl, 'http://flag');
  assert.equal(s.querySource.rpcUrl, 'http://rpc-env');
  assert.equal(s.querySource.rpcCookie, '/c');
  assert.equal(s.querySource.rpcUser, 'u');
  assert.equal(s.querySource.rpcPassword, '', 'an empty RPC password is a password');
});

test('log level, debug, node client, bad prover names', () => {
  assert.equal(loadSettings({ LOG_LEVEL: 'DEBUG' }).logLevel, 'debug');
  assert.equal(loadSettings({}).logLevel, 'info');
  assert.throws(
    () => loadSettings({ LOG_LEVEL: 'loud' }),
    (e: CharmsError) => e.code === 'CONFIG' && e.message === 'LOG_LEVEL "loud" is not a log level: use one of error, warn, info, debug, trace',
  );
  assert.equal(loadSettings({ CHARMS_DEBUG: '1' }).debug, true);
  assert.deepEqual(loadSettings({ BITCOIN_CLI: '/opt/bitcoin-cli', BITCOIN_CLI_ARGS: ' -testnet4  -rpcwait ' }).nodeClient, {
    bin: '/opt/bitcoin-cli',
    args: ['-testnet4', '-rpcwait'],
  });
  assert.throws(() => loadSettings({ APP_ZK_PROVER: 'gpu' }), { code: 'CONFIG' });
});

test('runnerSettingsOf: APP_MEMORY_LIMIT_MB in pages, APP_RUN_CONCURRENCY, APP_RUN_ISOLATION; bad values are CONFIG errors', () => {
  assert.deepEqual(runnerSettingsOf({}), {});
  assert.deepEqual(runnerSettingsOf({ APP_MEMORY_LIMIT_MB: '64', APP_RUN_CONCURRENCY: '3', APP_RUN_ISOLATION: 'thread' }), {
    memoryPages: 1024,
    concurrency: 3,
    isolation: 'thread',
  });
  assert.deepEqual(runnerSettingsOf({ APP_MEMORY_LIMIT_MB: '', APP_RUN_CONCURRENCY: '' }), {});
  assert.throws(() => runnerSettingsOf({ APP_MEMORY_LIMIT_MB: '4097' }), { code: 'CONFIG', message: /at most 4096/ });
  assert.throws(() => runnerSettingsOf({ APP_RUN_CONCURRENCY: '0' }), { code: 'CONFIG', message: /APP_RUN_CONCURRENCY/ });
  assert.throws(() => runnerSettingsOf({ APP_MEMORY_LIMIT_MB: '1.5' }), { code: 'CONFIG' });
});

test('noBundleOf: CHARMS_NO_BUNDLE=1 only', () => {
  assert.equal(noBundleOf({ CHARMS_NO_BUNDLE: '1' }), true);
  assert.equal(noBundleOf({ CHARMS_NO_BUNDLE: '0' }), false);
  assert.equal(noBundleOf({ CHARMS_NO_BUNDLE: 'true' }), false);
  assert.equal(noBundleOf({}), false);
});
