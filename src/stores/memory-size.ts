/**
 * How many bytes one MemoryStore entry is charged. A byte budget, not an entry count, is what keeps memory finite:
 * one abandoned authorization request with a long `state` costs a hundred times a short one, so a count alone lets
 * a flood of large requests grow the process toward gigabytes.
 */

/**
 * Charged per entry on top of its strings: the cache's bookkeeping (map slot, list links, TTL and size arrays)
 * and the two string headers. bench/memory-bounds.ts measured about 100 bytes per tiny entry on Node 20; charged
 * at nearly twice that so the budget errs toward holding less.
 */
export const ENTRY_OVERHEAD_BYTES = 192;

/**
 * The bytes an entry is charged: two per UTF-16 code unit of key and value (V8 stores one-byte strings more
 * compactly, so this overestimates ASCII) plus {@link ENTRY_OVERHEAD_BYTES}.
 *
 * @example
 * entryBytes('session:abc', '{"userId":"u-1"}') // 246
 */
export function entryBytes(key: string, value: string): number {
  return (key.length + value.length) * 2 + ENTRY_OVERHEAD_BYTES;
}
