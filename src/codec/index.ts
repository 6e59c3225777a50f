/** charms-ts/codec: our CBOR codec (byte-exact with ciborium) and the serde_json / serde_yaml compatible printers and lossless parsers. */
export { encodeCbor, decodeCbor, CborReader, CborWriter } from './cbor.js';
export { parseJson, toJsonCompact, toJsonPretty } from './json.js';
export { parseYaml, toYaml } from './yaml.js';
export { ValueMap, Tagged, type Value } from './value.js';
