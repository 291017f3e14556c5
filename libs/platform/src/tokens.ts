/** Injection tokens of the process-wide singletons. */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const DATABASE = Symbol('DATABASE');
export const REDIS = Symbol('REDIS');
