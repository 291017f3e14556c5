// The demo, the end-to-end tests and the benchmarks start the same real processes the same way.
export * from '@switchyard/devkit';
