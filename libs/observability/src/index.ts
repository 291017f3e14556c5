export * from './logger';
export * from './error-serializer';
export * from './telemetry';
export * from './metrics/metrics-registry';
export * from './metrics/process-metrics';
export * from './describe-error';
export * from './metrics/prometheus-text';
