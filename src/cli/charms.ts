#!/usr/bin/env node
import { runMain } from './main.js';

runMain('charms', false);
