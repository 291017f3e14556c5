import { fleetOverridesChannel, fleetOverridesKey, fleetSnapshotKey, fleetSnapshotsIndexKey } from '@switchyard/router';
import { spreadFeaturePrefix, taggedFeaturePrefix } from './redis-keys';

/**
 * Where the router's fleet runtime keeps its keys under a QUEUE_PREFIX (see redis-keys.ts):
 * snapshots and overrides are multi-key features (MULTI, MGET) with a hash tag each; the
 * shared breakers are one key per target, spread over a Cluster.
 */
export const routerFleetKeyPrefix = (queuePrefix: string): string => taggedFeaturePrefix(queuePrefix, 'router-fleet');
export const routerOverridesKeyPrefix = (queuePrefix: string): string => taggedFeaturePrefix(queuePrefix, 'router-overrides');
export const routerBreakersKeyPrefix = (queuePrefix: string): string => spreadFeaturePrefix(queuePrefix, 'router-breakers');

export const snapshotsIndexKey = (queuePrefix: string): string => fleetSnapshotsIndexKey(routerFleetKeyPrefix(queuePrefix));
export const snapshotKey = (queuePrefix: string, processId: string): string => fleetSnapshotKey(routerFleetKeyPrefix(queuePrefix), processId);
export const overridesKey = (queuePrefix: string): string => fleetOverridesKey(routerOverridesKeyPrefix(queuePrefix));
export const overridesChannel = (queuePrefix: string): string => fleetOverridesChannel(routerOverridesKeyPrefix(queuePrefix));
