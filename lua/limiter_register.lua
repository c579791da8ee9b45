-- Records a limiter in the registry that Sidekiq Enterprise's Web UI and
-- Wurk's dashboard list: its metadata hash and its name in `lmtr-list`, with
-- the time of its last use on Redis's clock. Run on every use, so the hash
-- expires `ttl` after the limiter was last used, not after it was created.
--
-- KEYS[1]  lmtr:<name>  HASH type, options (JSON), fingerprint, last_used (epoch seconds, decimal)
-- KEYS[2]  lmtr-list    SET of registered limiter names
-- ARGV[1]  name
-- ARGV[2]  type: concurrent | window | bucket | leaky | points
-- ARGV[3]  options JSON (Wurk's field names, so a Ruby process can rebuild the limiter)
-- ARGV[4]  fingerprint: hex SHA-256 of "<type>|<name>|<options JSON>"
-- ARGV[5]  ttl in seconds
--
-- Returns 1 when the name was new to `lmtr-list`, else 0.
local clock = redis.call('TIME')
local now = clock[1] .. '.' .. string.format('%06d', tonumber(clock[2]))
-- SADD only when the hash is new: a set of millions of interpolated names is
-- not rewritten on every use. Safe because the sweep (limiter_registry_sweep)
-- drops a name only while its hash is missing, in one step of its own.
local created = redis.call('EXISTS', KEYS[1]) == 0
redis.call('HSET', KEYS[1], 'type', ARGV[2], 'options', ARGV[3], 'fingerprint', ARGV[4], 'last_used', now)
redis.call('EXPIRE', KEYS[1], ARGV[5])
if created then
  return redis.call('SADD', KEYS[2], ARGV[1])
end
return 0
