/** charms-ts/server: the proving server (`charms server`). */
export { startProveServer, type ProveServer, type ProveServerOptions, type ProveHttpOptions, type ProveFn } from './server.js';
export { loadSettings, runnerSettingsOf, type Settings, type RunnerSettings } from '../settings/settings.js';
export { createLogger, lineLogger, type Logger } from '../infra/log.js';
