// The container image's HEALTHCHECK (Containerfile): finds the `charms` / `charms-prover` server
// the container runs (PID 1, or a child of an init such as `--init`'s), reads its command line
// for the command, `--ip` and `--port`, and probes it on its own port: `GET /ready` for `server`
// and `query-server`, `GET /v1/status` for `index` (503 while it is more than 6 blocks behind its
// node, has not reached it, or stopped on an over-cap reorg: docs/index.md). Exit 0 healthy, 1
// not; a container running no server (a one-shot command) is healthy.
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';

const SERVERS = {
  server: { port: 17784, path: '/ready' },
  'query-server': { port: 17785, path: '/ready' },
  index: { port: 17786, path: '/v1/status' },
};
const TIMEOUT_MS = 4000;

/** The argv after the script of the first process running the charms CLI, or undefined. */
function charmsArgv() {
  const pids = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .sort((a, b) => a - b);
  for (const pid of pids) {
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      continue; // gone meanwhile
    }
    const i = argv.findIndex((a) => /(^|\/)charms(-prover)?(\.js)?$/.test(a));
    if (i >= 0) return argv.slice(i + 1);
  }
  return undefined;
}

/** The value of `--name V` or `--name=V` in argv. */
function option(argv, name) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}`) return argv[i + 1];
    if (argv[i].startsWith(`--${name}=`)) return argv[i].slice(name.length + 3);
  }
  return undefined;
}

const argv = charmsArgv();
const command = argv?.find((a) => Object.hasOwn(SERVERS, a));
if (!argv || !command) {
  console.log('no charms server runs in this container: nothing to probe');
  process.exit(0);
}
const target = SERVERS[command];
const port = Number(option(argv, 'port') ?? target.port);
const ip = option(argv, 'ip');
// a wildcard address is reached on loopback
const host = !ip || ip === '0.0.0.0' || ip === '::' ? '127.0.0.1' : ip;
const req = http.get({ host, port, path: target.path, agent: false, timeout: TIMEOUT_MS }, (res) => {
  res.resume();
  res.on('end', () => {
    console.log(`${command}: GET ${target.path} on port ${port}: ${res.statusCode}`);
    process.exit(res.statusCode === 200 ? 0 : 1);
  });
});
req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
req.on('error', (e) => {
  console.log(`${command}: GET ${target.path} on port ${port}: ${e.message}`);
  process.exit(1);
});
