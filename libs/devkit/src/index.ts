// Starting the real built processes and pointing them at llm-sim: shared by the demo, the
// end-to-end tests and the benchmarks.
export * from './processes';
export * from './sim-targets';
export * from './tunnelling-proxy';
export * from './refused-connect';
