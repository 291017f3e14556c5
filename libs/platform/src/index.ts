export * from './tokens';
export * from './redis';
export * from './core.module';
export * from './readiness';
export * from './shutdown';
export * from './router.provider';
export * from './ledger.module';
export * from './tenants-config';
