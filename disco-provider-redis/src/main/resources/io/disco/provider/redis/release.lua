-- Deletes one claim of its owner: a release (guarded by the token the grant was handed out with, as etcd's by the
-- create revision) or a withdrawal (token '*': whatever its state, the claim was never handed out). Frees its
-- semaphore slot and wakes the claims now admitted. ARGV: id, owner, token or '*'.
-- Answers {'deleted'} | {'gone'} (no such claim of this owner with this token)
local id = ARGV[1]
local ck = ckey(id)
local f = redis.call('HMGET', ck, 'owner', 'token', 'slot')
if not f[1] then
  redis.call('ZREM', Q, id)
  return {'gone'}
end
if f[1] ~= ARGV[2] or (ARGV[3] ~= '*' and f[2] ~= ARGV[3]) then return {'gone'} end
redis.call('DEL', ck)
redis.call('ZREM', Q, id)
free_slot(id, f[3])
notify((head()))
return {'deleted'}
