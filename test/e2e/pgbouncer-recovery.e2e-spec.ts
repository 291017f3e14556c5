/**
 * Drill, second half of pgbouncer.e2e-spec.ts (split to keep each file near a minute): the
 * crash-recovery e2e spec runs unchanged with every process's DATABASE_URL through a
 * transaction-mode PgBouncer of each stack's own (DATABASE_POOL_MODE=transaction).
 */
import { useTopologyForNewStacks } from '../support/stack';
import './recovery.e2e-spec';

// Set while the modules load, read when their hooks start stacks.
useTopologyForNewStacks('pgbouncer');
