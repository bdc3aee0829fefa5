/**
 * The Lua scripts of {@link RedisStore}: each is one atomic step on one key (or, for `swap`, on keys that share a hash
 * tag), sent by SHA-1 with EVALSHA. They live apart from the store so that the store reads as its commands.
 */
import { createHash } from 'node:crypto';

/**
 * A Lua script and its SHA-1, so that every call sends EVALSHA (40 bytes) instead of the whole script, and Redis
 * runs its cached compiled copy instead of hashing the script text again (EVAL does, on every call).
 */
export interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Increments a fixed-window counter in one atomic step. INCR creates the key at 1 without a TTL, so the first
 * increment (and only the first) sets the window with PEXPIRE; later increments leave the TTL alone, which keeps the
 * window fixed instead of sliding. Done as a script because INCR followed by a separate PEXPIRE could be cut in
 * half by a crash or a lost connection, leaving a counter that never expires (a permanent lockout). The `PTTL == -1`
 * branch repairs such a TTL-less counter anyway, should one ever exist (e.g. written by hand).
 */
export const INCREMENT_SCRIPT = script(`
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n
`);

/**
 * Gives one slot of a counter back: DECR keeps the TTL, and the script never starts a counter. A counter it would
 * bring to zero (or one already at zero or below) is deleted instead: it holds nothing, and kept until its window
 * ends, every success from a new IPv6 /64 would leave one behind (under `noeviction`, memory that only grows). One
 * key, so legal on Redis Cluster; a script, so no increment can land between the read and the DEL.
 */
export const DECREMENT_SCRIPT = script(`
local v = tonumber(redis.call('GET', KEYS[1]))
if not v then return 0 end
if v <= 1 then
  redis.call('DEL', KEYS[1])
  return 0
end
return redis.call('DECR', KEYS[1])
`);

/**
 * GETDEL for servers older than Redis 6.2. A script runs atomically, so of any number of concurrent callers exactly
 * one sees the value, just like GETDEL.
 */
export const TAKE_SCRIPT = script(`
local v = redis.call('GET', KEYS[1])
if v then redis.call('DEL', KEYS[1]) end
return v
`);

/**
 * Multi-key compare-and-set in one script (atomic: Redis runs a script without interleaving other commands). Four
 * arguments per key: whether a value is expected ('1') or absence ('0'), the expected value, the new value's PX
 * ('0' deletes the key) and the new value. Every check runs before any write, so a failed check changes nothing.
 * SETs run before DELs because Redis refuses a memory-growing write with OOM only while a script has written
 * nothing yet: a SET first means an out-of-memory Redis refuses the whole swap instead of letting it run on.
 */
export const SWAP_SCRIPT = script(`
for i = 1, #KEYS do
  local b = (i - 1) * 4
  local v = redis.call('GET', KEYS[i])
  if ARGV[b + 1] == '0' then
    if v then return 0 end
  elseif v ~= ARGV[b + 2] then
    return 0
  end
end
for i = 1, #KEYS do
  local b = (i - 1) * 4
  if ARGV[b + 3] ~= '0' then redis.call('SET', KEYS[i], ARGV[b + 4], 'PX', ARGV[b + 3]) end
end
for i = 1, #KEYS do
  if ARGV[(i - 1) * 4 + 3] == '0' then redis.call('DEL', KEYS[i]) end
end
return 1
`);

/**
 * Adds jobs to a queue: KEYS[1] a sorted set of job ids scored by due time (milliseconds), KEYS[2] a hash of their
 * payloads; ARGV triples of id, due time and payload. A job already queued is left as it is unless it is due later
 * than its new copy, so queueing the same job twice queues it once; a claimed job (due when its lease ends) takes
 * the new due time and payload, and its claimer's settle no longer applies (the lease is its fencing token), so what
 * was queued after the claim gets an attempt of its own. Both keys share a hash tag: one slot on Redis Cluster.
 */
export const ENQUEUE_JOBS_SCRIPT = script(`
for i = 1, #ARGV, 3 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if not score or tonumber(score) > tonumber(ARGV[i + 1]) then
    redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
  end
end
return 1
`);

/**
 * Claims due jobs: the earliest up to ARGV[3] whose due time is at most ARGV[1] get the due time ARGV[2] (their
 * lease), and come back as id, payload pairs. One script, so of concurrent claimers each job goes to one; a claimer
 * that dies leaves its jobs to come due again when the lease ends. An id without a payload (a half-removed job)
 * is dropped.
 */
export const CLAIM_JOBS_SCRIPT = script(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  local payload = redis.call('HGET', KEYS[2], id)
  if payload then
    redis.call('ZADD', KEYS[1], ARGV[2], id)
    out[#out + 1] = id
    out[#out + 1] = payload
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
`);

/**
 * Settles a claimed job while it still holds the claim's lease (ARGV[2]): removes it (ARGV[3] = '') or puts it back
 * due at ARGV[3] with payload ARGV[4]. Returns 1 when applied, 0 when another claim took the job since.
 */
export const SETTLE_JOB_SCRIPT = script(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
end
return 1
`);
