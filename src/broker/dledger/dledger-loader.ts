// DLedger mode's code (dledger-mode.ts and src/ha/dledger: ~30 modules, ~200 KB) is loaded only by a broker in that
// mode: a broker without it starts ~30 ms sooner. createBroker is synchronous, so whoever creates a DLedger-mode
// broker awaits loadDLedgerMode(config) first (the CLI, startBroker(), tests).
import type { BrokerConfig } from '../../common/config.js';

type DLedgerMode = typeof import('./dledger-mode.js');

let loaded: DLedgerMode | undefined;

/** Loads DLedger mode's modules when `config` (if given) turns it on; idempotent. */
export async function loadDLedgerMode(config?: Pick<BrokerConfig, 'enableDLegerCommitLog'>): Promise<void> {
  if (config && !config.enableDLegerCommitLog) return;
  loaded ??= await import('./dledger-mode.js');
}

/** The loaded module; throws when loadDLedgerMode was not awaited. */
export function dledgerMode(): DLedgerMode {
  if (!loaded) throw new Error('enableDLegerCommitLog: DLedger mode is not loaded (await loadDLedgerMode() before createBroker)');
  return loaded;
}
