export * from './ledger-entry';
export * from './ledger-writer';
export * from './upstream-metrics.observer';
