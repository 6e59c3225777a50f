/**
 * The real proof backend: Charms' two SP1 stages through a Prover Network client.
 *  - APP_ZK_PROVER=network: stage 1 on the public network (auction) at NETWORK_RPC_URL, paid by the
 *    NETWORK_PRIVATE_KEY account;
 *  - ZK_GPU_SERVICE_URL: stage 1 on a self-hosted sp1-cluster network-gateway (the base API, reserved
 *    mode) — the same client;
 *  - SPELL_ZK_PROVER=network sends stage 2 to the public network; `app` keeps it where stage 1 runs.
 * Readiness asks the network whether both programs are registered (a definite answer is cached
 * for a minute; transient errors are retried, never cached).
 */
import { randomBytes } from 'node:crypto';
import type { SignedScrollOutputs } from '../../bitcoin/scrolls.js';
import { CharmsError } from '../../errors.js';
import type { Logger } from '../../infra/log.js';
import type { ProveRequest } from '../../model/request.js';
import type { NormalizedSpell } from '../../model/spell.js';
import { toHex } from '../../util/bytes.js';
import { redactText } from '../../util/redact.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_HASH, proveSpellOnNetwork } from './charms.js';
import { NetworkClient, type ClientOptions } from './client.js';
import { charmsSettings, type ProveContext, type RequestSettings } from './request.js';
import { NetworkSigner, addressHex } from './signer.js';

import { MAINNET_RPC_URL, type Endpoint } from './plan.js';
export { networkPlan, type Endpoint } from './plan.js';

export interface ProofInput {
  /** The full spell (ins and coins kept): what stage 1 checks and commits to. */
  spell: NormalizedSpell;
  request: ProveRequest;
  scrollOutputs?: SignedScrollOutputs;
  /** Aborted when the server stops: no new paid request (stage 2) is sent. */
  stopping?: AbortSignal | undefined;
}

export interface NetworkBackendOptions {
  log?: Logger;
  client?: ClientOptions;
  settings?: Partial<RequestSettings>;
  /** How long a readiness answer is reused. */
  readyCacheMs?: number;
}

export class NetworkBackend {
  readonly name: string;
  readonly mock = false;
  readonly signer: NetworkSigner;
  private readonly clients = new Map<string, NetworkClient>();
  private readonly app: ProveContext;
  private readonly wrapper: ProveContext;
  private readiness: { at: number; reason: string | undefined } | undefined;
  private readinessCheck: Promise<string | undefined> | undefined;

  constructor(
    plan: { app: Endpoint; wrapper: Endpoint; key: string | undefined },
    private readonly opts: NetworkBackendOptions = {},
  ) {
    // A self-hosted gateway in auth mode "none" accepts any signer: without a key, an ephemeral one.
    this.signer = new NetworkSigner(plan.key ?? toHex(randomBytes(32)));
    const ctx = (e: Endpoint, stage: string): ProveContext => ({
      client: this.clientFor(e.url),
      settings: { ...charmsSettings(e.variant), ...opts.settings },
      stage,
      progress: (p) => opts.log?.info(`${p.stage}: ${p.status}${p.requestId ? ` (request ${p.requestId})` : ''}`),
    });
    this.app = ctx(plan.app, 'stage 1 (spell checker)');
    this.wrapper = ctx(plan.wrapper, 'stage 2 (SNARK wrapper)');
    this.name = plan.app.variant === 'base' ? 'sp1-gateway' : 'sp1-network';
  }

  private clientFor(url: string): NetworkClient {
    let c = this.clients.get(url);
    if (!c) {
      c = new NetworkClient(url, this.signer, { ...this.opts.client, ...(this.opts.log ? { log: this.opts.log } : {}) });
      this.clients.set(url, c);
    }
    return c;
  }

  /**
   * Why the backend cannot prove now (program not registered, network unreachable), or undefined.
   * GetProgram is retried on transient gRPC errors as the SDK does; only a definite answer
   * (registered or not) is reused for `readyCacheMs`, so a blip costs a retry, not a minute of
   * refusals. Concurrent callers share one check.
   */
  async unavailable(): Promise<string | undefined> {
    if (this.readiness && Date.now() - this.readiness.at < (this.opts.readyCacheMs ?? 60_000)) return this.readiness.reason;
    this.readinessCheck ??= this.checkPrograms().finally(() => (this.readinessCheck = undefined));
    return this.readinessCheck;
  }

  private async checkPrograms(): Promise<string | undefined> {
    const at = Date.now();
    let reason: string | undefined;
    try {
      for (const [ctx, vk] of [
        [this.app, SPELL_CHECKER_VK_HASH],
        [this.wrapper, PROOF_WRAPPER_VK_HASH],
      ] as const) {
        if (!(await ctx.client.getProgram(vk))) {
          reason = `the program 0x${toHex(vk)} (${ctx.stage}) is not registered on the prover network at ${ctx.client.channel.origin}`;
          break;
        }
      }
    } catch (e) {
      this.readiness = undefined; // not an answer: the next call asks again
      return `cannot reach the prover network: ${redactText((e as Error).message)}`;
    }
    this.readiness = { at, reason };
    return reason;
  }

  async ready(): Promise<boolean> {
    return (await this.unavailable()) === undefined;
  }

  async prove(_publicValues: Uint8Array, input?: ProofInput): Promise<Uint8Array> {
    if (!input) throw new CharmsError('INTERNAL', 'the network backend needs the spell and the request, not only the public values');
    return proveSpellOnNetwork(input.request, input.spell, { app: this.app, wrapper: this.wrapper, stopping: input.stopping }, input.scrollOutputs);
  }

  /** Account, balance and program registration, for `charms-prover network status`. Never includes the key. */
  async status(): Promise<Record<string, unknown> & { ready: boolean }> {
    let ready = true;
    const out: Record<string, unknown> = { address: addressHex(this.signer.address) };
    const stages = [
      ['spell_checker', this.app, SPELL_CHECKER_VK_HASH],
      ['proof_wrapper', this.wrapper, PROOF_WRAPPER_VK_HASH],
    ] as const;
    for (const [name, ctx, vk] of stages) {
      const c = ctx.client;
      const entry: Record<string, unknown> = {
        rpc_url: redactText(c.channel.origin),
        mode:
          ctx.settings.variant !== 'auction' ? 'reserved (base API)' : c.channel.origin === new URL(MAINNET_RPC_URL).origin ? 'auction (mainnet)' : 'auction',
        vk_hash: `0x${toHex(vk)}`,
      };
      try {
        const p = await c.getProgram(vk, { once: true });
        entry.registered = p !== undefined;
        if (!p) ready = false;
        if (ctx.settings.variant === 'auction') entry.balance_prove_wei = await c.getBalance({ once: true });
      } catch (e) {
        entry.error = redactText((e as Error).message);
        ready = false;
      }
      out[name] = entry;
    }
    return { ...out, ready };
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
  }
}
