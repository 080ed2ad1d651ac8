-- Deletes every claim of one owner on a name (its session is closing: it leaves nothing behind, as a ZooKeeper session
-- takes its ephemeral nodes with it), its double barrier participants too, frees their slots and wakes the claims now
-- admitted and the barrier's waiters. ARGV: owner.
-- Answers {'dropped', how many}
local n = 0
for _, m in ipairs(redis.call('ZRANGE', Q, 0, -1)) do
  local f = redis.call('HMGET', ckey(m), 'owner', 'slot')
  if f[1] == ARGV[1] then
    redis.call('DEL', ckey(m))
    redis.call('ZREM', Q, m)
    free_slot(m, f[2])
    n = n + 1
  end
end
if n > 0 then notify((head())) end
local d = 0 -- its double barrier participants: the barrier's waiters check again
for _, m in ipairs(redis.call('ZRANGE', DQ, 0, -1)) do
  if redis.call('HGET', ckey(m), 'owner') == ARGV[1] then
    redis.call('DEL', ckey(m))
    redis.call('ZREM', DQ, m)
    d = d + 1
  end
end
if d > 0 then redis.call('PUBLISH', CH, '+d') end
return {'dropped', tostring(n + d)}
