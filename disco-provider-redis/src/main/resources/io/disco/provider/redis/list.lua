-- Reads the queue of a name in one snapshot, writing nothing: the semaphore's limit (or ''), then per claim in
-- queue order whose claim key exists: id, owner, kind, token, slot, value, meta, since, pttl.
local out = {redis.call('HGET', TOK, 'limit') or ''}
for _, m in ipairs(redis.call('ZRANGE', Q, 0, -1)) do
  local f = redis.call('HMGET', ckey(m), 'owner', 'kind', 'token', 'slot', 'value', 'meta', 'since')
  if f[1] then
    out[#out + 1] = m
    for i = 1, 7 do out[#out + 1] = f[i] or '' end
    out[#out + 1] = tostring(redis.call('PTTL', ckey(m)))
  end
end
return out
