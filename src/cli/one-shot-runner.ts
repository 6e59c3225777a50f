import { appCacheDirOf, runnerSettingsOf } from '../settings/settings.js';
import { configureRunner } from '../runner/index.js';
import { lineLogger } from '../infra/log.js';

/**
 * The app runner of a one-shot command (`spell check`, local `spell prove`): contracts run on the
 * main thread (no worker to start; `APP_RUN_ISOLATION=worker` brings the workers and their
 * wall-clock guard back) and prepared modules are kept on disk (SVC_APP_CACHE_DIR); the runner's
 * warnings (a cache that cannot be written) are plain `warning:` lines on stderr.
 */
export const configureOneShotRunner = (env: Record<string, string | undefined>): Promise<void> =>
  configureRunner({ isolation: 'thread', ...runnerSettingsOf(env), preparedCacheDir: appCacheDirOf(env) }, lineLogger());
