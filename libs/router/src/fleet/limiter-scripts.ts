/**
 * The fleet limiter's Lua scripts. Every key of one target shares a hash tag, so a script
 * touches one Redis Cluster slot. Time is the caller's `now` (tests drive a fake clock) or,
 * when ARGV[1] is empty, Redis's own TIME, so processes with skewed clocks agree.
 *
 * KEYS[1] slot holders: sorted set, member = holder id, score = expiry (ms)
 * KEYS[2] minute window: hash, `r:<second>` = requests, `t:<second>` = tokens
 * KEYS[3] requests the upstream itself last said are left (its x-ratelimit headers), expiring at its reset
 * KEYS[4] tokens the upstream last said are left, likewise
 */
const NOW = `
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * ARGV: now, holder, ttl_ms, max_concurrency (0 = none), rpm (0 = none), tpm (0 = none), tokens.
 * Returns {1, 'ok', held, 0} or {0, reason, held, retry_after_ms} with reason
 * `concurrency`, `rpm` or `tpm`. Expired holders (a process that died) are dropped first.
 */
export const ACQUIRE_SCRIPT = `${NOW}
local holder = ARGV[2]
local ttl = tonumber(ARGV[3])
local max_concurrency = tonumber(ARGV[4])
local rpm = tonumber(ARGV[5])
local tpm = tonumber(ARGV[6])
local tokens = tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if max_concurrency > 0 and held >= max_concurrency then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, 'concurrency', held, math.max(1, tonumber(first[2]) - now)}
end
local upstream_requests = redis.call('GET', KEYS[3])
if upstream_requests and tonumber(upstream_requests) < 1 then return {0, 'rpm', held, math.max(1, redis.call('PTTL', KEYS[3]))} end
local upstream_tokens = redis.call('GET', KEYS[4])
if upstream_tokens and tonumber(upstream_tokens) < math.max(1, tokens) then return {0, 'tpm', held, math.max(1, redis.call('PTTL', KEYS[4]))} end
if upstream_requests then redis.call('DECRBY', KEYS[3], 1) end
if upstream_tokens then redis.call('DECRBY', KEYS[4], tokens) end
local second = math.floor(now / 1000)
if rpm > 0 or tpm > 0 then
  local fields = redis.call('HGETALL', KEYS[2])
  local requests, used_tokens, oldest = 0, 0, second
  for i = 1, #fields, 2 do
    local kind = string.sub(fields[i], 1, 1)
    local at = tonumber(string.sub(fields[i], 3))
    if at <= second - 60 then
      redis.call('HDEL', KEYS[2], fields[i])
    else
      if at < oldest then oldest = at end
      if kind == 'r' then requests = requests + tonumber(fields[i + 1]) else used_tokens = used_tokens + tonumber(fields[i + 1]) end
    end
  end
  local retry = math.max(1, (oldest + 60) * 1000 - now)
  if rpm > 0 and requests + 1 > rpm then return {0, 'rpm', held, retry} end
  if tpm > 0 and used_tokens + tokens > tpm and used_tokens > 0 then return {0, 'tpm', held, retry} end
  redis.call('HINCRBY', KEYS[2], 'r:' .. second, 1)
  redis.call('HINCRBY', KEYS[2], 't:' .. second, tokens)
  redis.call('PEXPIRE', KEYS[2], 61000)
end
redis.call('ZADD', KEYS[1], now + ttl, holder)
redis.call('PEXPIRE', KEYS[1], ttl + 1000)
return {1, 'ok', held + 1, 0}
`;

/** ARGV: now, ttl_ms, holder... Pushes each holder's expiry out by ttl (re-adding one that lapsed: its call still runs). */
export const RENEW_SCRIPT = `${NOW}
local ttl = tonumber(ARGV[2])
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ttl + 1000)
return #ARGV - 2
`;
