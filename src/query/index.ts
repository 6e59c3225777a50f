/** charms-ts/query: the spell-query service (`charms query-server`) and its answer's shape. */
export { startQueryServer } from './service.js';
export { spellQueryValue } from './shape.js';
