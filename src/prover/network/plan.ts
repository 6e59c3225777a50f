/**
 * Where each proving stage runs for a configuration (the SP1 Prover Network, a self-hosted
 * sp1-cluster gateway), or why nothing can prove. Light on purpose: commands that only need the
 * answer do not load the network client.
 */
import type { ProverConfig } from '../../settings/settings.js';
import { redactText } from '../../util/redact.js';
import type { NetworkVariant } from './proto.js';

/** The SDK's default RPC of the public (mainnet, auction) Prover Network. */
export const MAINNET_RPC_URL = 'https://rpc.mainnet.succinct.xyz';

export interface Endpoint {
  url: string;
  variant: NetworkVariant;
}

export type NetworkPlan = { app: Endpoint; wrapper: Endpoint; key: string | undefined } | { unavailable: string };

const ALTERNATIVES =
  'set APP_ZK_PROVER=network with NETWORK_PRIVATE_KEY (the Succinct Prover Network), or ZK_GPU_SERVICE_URL=<sp1-cluster network-gateway URL>, or run with --mock (MOCK=1), or relay to a proving service with the `charms` build (SVC_PROVE_API_URL)';

const isHttpUrl = (u: string): boolean => {
  try {
    return /^https?:$/.test(new URL(u).protocol);
  } catch {
    return false;
  }
};

/** Where each stage runs for this configuration, or why nothing can prove. */
export function networkPlan(c: ProverConfig): NetworkPlan {
  const networkUrl = c.networkRpcUrl ?? MAINNET_RPC_URL;
  const gpu = c.gpuServiceUrl;
  if (gpu && /\/twirp\/?$/.test(new URL(gpu, 'http://x').pathname))
    return {
      unavailable: `ZK_GPU_SERVICE_URL=${redactText(gpu)} looks like SP1 v5's Moongate (Twirp) GPU server, which cannot make SP1 v6 proofs; point it at an sp1-cluster network-gateway instead`,
    };
  const needKey = c.appProver === 'network' || c.spellProver === 'network';
  if (needKey && !isHttpUrl(networkUrl))
    return {
      unavailable: `NETWORK_RPC_URL=${JSON.stringify(redactText(networkUrl))} is not an http(s) URL; set it to the Prover Network RPC (default ${MAINNET_RPC_URL}) or unset it`,
    };
  if (needKey && !c.networkPrivateKey) return { unavailable: 'network proving needs NETWORK_PRIVATE_KEY (the Prover Network account key); it is not set' };
  let app: Endpoint;
  if (c.appProver === 'network') app = { url: networkUrl, variant: 'auction' };
  else if (gpu) app = { url: gpu, variant: 'base' };
  else return { unavailable: `local CPU SP1 proving (APP_ZK_PROVER=cpu) is not available: no SP1 prover runs in Node; ${ALTERNATIVES}` };
  const wrapper: Endpoint = c.spellProver === 'network' ? { url: networkUrl, variant: 'auction' } : app;
  return { app, wrapper, key: c.networkPrivateKey };
}
