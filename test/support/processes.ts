// The demo and the end-to-end tests start the same real processes the same way.
export * from '../../apps/demo/src/processes';
