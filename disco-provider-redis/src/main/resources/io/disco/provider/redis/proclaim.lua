-- A leader's new value: rewrites its claim's value (the term and token stay) and appends it to the election's log.
-- ARGV: id, owner, token, value. Answers {'proclaimed', version} | {'gone'}
local ck = ckey(ARGV[1])
local f = redis.call('HMGET', ck, 'owner', 'token')
if not f[1] or f[1] ~= ARGV[2] or f[2] ~= ARGV[3] then return {'gone'} end
local v = redis.call('HINCRBY', ck, 'pv', 1)
redis.call('HSET', ck, 'value', ARGV[4])
redis.call('XADD', LOG, 'MAXLEN', '~', 64, '*', 'token', ARGV[3], 'v', v, 'id', ARGV[1], 'value', ARGV[4])
redis.call('PUBLISH', CH, '+log')
return {'proclaimed', tostring(v)}
