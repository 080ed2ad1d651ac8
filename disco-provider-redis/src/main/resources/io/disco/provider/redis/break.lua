-- Deletes claims behind their owners' backs, as an operator does ('disco break'), all at once (one name: one
-- script, so nobody is admitted between two of the deletions): frees their slots, wakes the claims now admitted, and,
-- if asked, announces each deletion on the channel 'disco:gone' ('c <owner> <key>'), on which every session learns at
-- once that a claim of its own is gone. ARGV: '1' to announce, then the claim ids.
-- Answers {'deleted', owner of each claim deleted ...} | {'gone'} when none was there
local deleted = {'deleted'}
for i = 2, #ARGV do
  local id = ARGV[i]
  local ck = ckey(id)
  local f = redis.call('HMGET', ck, 'owner', 'slot')
  redis.call('ZREM', Q, id)
  if f[1] then
    redis.call('DEL', ck)
    free_slot(id, f[2])
    deleted[#deleted + 1] = f[1]
    if ARGV[1] == '1' then redis.call('PUBLISH', 'disco:gone', 'c ' .. f[1] .. ' ' .. ck) end
  end
end
if #deleted == 1 then return {'gone'} end
notify((head()))
return deleted
