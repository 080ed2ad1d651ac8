-- After a double barrier enter given up: withdraws participant 'id' of 'owner' (deletes its key, removes it from
-- 'dq', wakes the barrier's waiters), unless the barrier opened while it was registered: then it stays, inside. One
-- script, so that the barrier cannot open between the check and the deletion. ARGV: id, owner.
-- Answers {'open'} (it stays) | {'withdrawn'} (no key of it is left)
local id, owner = ARGV[1], ARGV[2]
local ck = ckey(id)
local seq = redis.call('ZSCORE', DQ, id)
local mine = redis.call('HGET', ck, 'owner') == owner
if seq and mine and tonumber(redis.call('HGET', TOK, 'dopen') or '0') >= tonumber(seq) then return {'open'} end
if mine then redis.call('DEL', ck) end
if seq and redis.call('ZREM', DQ, id) == 1 then redis.call('PUBLISH', CH, '+d') end
return {'withdrawn'}
