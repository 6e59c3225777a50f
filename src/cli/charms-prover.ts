#!/usr/bin/env node
import { loadEntry } from '../util/bundle.js';
import { noBundleOf } from '../settings/env.js';

// from the bundle of main.js when the build made one (util/bundle.ts: a faster start)
const { runMain } = await loadEntry<typeof import('./main.js')>(new URL('./main.js', import.meta.url), noBundleOf(process.env));
runMain('charms-prover', true);
