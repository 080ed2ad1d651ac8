-- Reads, in one snapshot and writing nothing, where an election's log ends and who leads now: {last log entry's id
-- ('0-0' when empty)} and, if a candidate leads, its claim id, token and value.
local top = redis.call('XREVRANGE', LOG, '+', '-', 'COUNT', 1)
local out = {top[1] and top[1][1] or '0-0'}
for _, m in ipairs(redis.call('ZRANGE', Q, 0, -1)) do
  local f = redis.call('HMGET', ckey(m), 'kind', 'token', 'value')
  if f[1] then
    if f[1] == 'e' and f[2] ~= '0' then
      out[2], out[3], out[4] = m, f[2], f[3]
    end
    break
  end
end
return out
