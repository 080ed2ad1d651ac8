-- Deletes a claim behind its owner's back, as an operator does ('disco break'): frees its slot, wakes the claims
-- now admitted, and announces the deletion on the channel 'disco:gone' ('c <owner> <key>'), on which every session
-- learns at once that a claim of its own is gone. ARGV: id, '1' to announce.
-- Answers {'deleted', owner} | {'gone'}
local id = ARGV[1]
local ck = ckey(id)
local f = redis.call('HMGET', ck, 'owner', 'slot')
redis.call('ZREM', Q, id)
if not f[1] then return {'gone'} end
redis.call('DEL', ck)
free_slot(id, f[2])
notify(scan())
if ARGV[2] == '1' then redis.call('PUBLISH', 'disco:gone', 'c ' .. f[1] .. ' ' .. ck) end
return {'deleted', f[1]}
