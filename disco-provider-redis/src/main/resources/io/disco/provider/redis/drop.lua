-- Deletes every claim of one owner on a name (its session is closing: it leaves nothing behind, as a ZooKeeper session
-- takes its ephemeral nodes with it), frees their slots and wakes the claims now admitted. ARGV: owner.
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
return {'dropped', tostring(n)}
