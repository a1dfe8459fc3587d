// The DLedger on-disk store (issue #14): DLedgerStorePort (../types.ts) over files an official 0.3.1.2 member
// reads and writes (protocol/dledger.md §4).
export { DLedgerFileStore, DLEDGER_TAIL_CACHE_BYTES, DLEDGER_TAIL_CACHE_ENTRIES } from './file-store.js';
export type { DLedgerDataFile, DLedgerFileStoreOptions } from './file-store.js';
export {
  DLEDGER_BLANK_MAGIC,
  DLEDGER_ENTRY_MAGIC,
  DLEDGER_INDEX_UNIT_BYTES,
  DLEDGER_MAX_ENTRY_BYTES,
  DLEDGER_MIN_BLANK_BYTES,
  decodeEntry,
  encodeEntry,
  entriesEqual,
} from './entry-codec.js';
