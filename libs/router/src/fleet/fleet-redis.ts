/**
 * The Redis commands the fleet runtime (overrides, snapshots, breakers) uses. An ioredis
 * `Redis` or `Cluster` satisfies them; the router library names only what it calls, so it
 * depends on no connection helper of the apps.
 */
export interface FleetRedisClient {
  readonly status: string;
  multi(): FleetRedisMulti;
  set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>;
  del(...keys: string[]): Promise<number>;
  pttl(key: string): Promise<number>;
  publish(channel: string, message: string): Promise<number>;
  hgetall(key: string): Promise<Record<string, string>>;
  zremrangebyscore(key: string, min: string, max: string): Promise<number>;
  zrange(key: string, start: string, stop: string): Promise<string[]>;
  mget(keys: string[]): Promise<(string | null)[]>;
}

export interface FleetRedisMulti {
  set(key: string, value: string, px: 'PX', ms: number): FleetRedisMulti;
  del(...keys: string[]): FleetRedisMulti;
  zadd(key: string, score: number, member: string): FleetRedisMulti;
  zrem(key: string, ...members: string[]): FleetRedisMulti;
  zremrangebyscore(key: string, min: string, max: string): FleetRedisMulti;
  hset(key: string, field: string, value: string): FleetRedisMulti;
  hdel(key: string, ...fields: string[]): FleetRedisMulti;
  publish(channel: string, message: string): FleetRedisMulti;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** A connection of its own in subscriber mode (the caller opens it: standalone, Sentinel or Cluster alike). */
export interface FleetRedisSubscriber {
  readonly status: string;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
}
