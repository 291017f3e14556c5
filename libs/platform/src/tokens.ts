/** Injection tokens of the process-wide singletons. */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const DATABASE = Symbol('DATABASE');
export const REDIS = Symbol('REDIS');
/** `CallObserver[]` the router tells of every upstream attempt (cost ledger, metrics); provided by LedgerModule. */
export const CALL_OBSERVERS = Symbol('CALL_OBSERVERS');
