-- Deletes claims behind their owners' backs, as an operator does ('disco break'), all at once (one name: one
-- script, so nobody is admitted between two of the deletions): frees their slots, wakes the claims now admitted (and a
-- double barrier's waiters, when a participant is among them: '+d' on the name's channel), and,
-- if asked, announces each deletion on the channel 'disco:gone' ('c <owner> <key>'), on which every session learns at
-- once that a claim of its own is gone. ARGV: flags, then the claim ids. The flags: '1' to announce ('0' not), then
-- optionally 'g' (guarded: every claim must exist, else nothing is deleted), 'h' (with 'g': and hold a token) and 'p'
-- (end the read phase: its token is forgotten, so that the next reader's is a new, higher one).
-- Answers {'deleted', owner of each claim deleted ...} | {'gone'} when none was there | {'changed', id} when guarded
-- and claim id is gone (or, with 'h', holds nothing)
local flags = ARGV[1]
if string.find(flags, 'g', 2, true) then
  local holding = string.find(flags, 'h', 2, true)
  for i = 2, #ARGV do
    local t = redis.call('HGET', ckey(ARGV[i]), 'token')
    if not t or (holding and t == '0') then return {'changed', ARGV[i]} end
  end
end
local deleted = {'deleted'}
local left = false -- a double barrier participant among them: its barrier's waiters check again
for i = 2, #ARGV do
  local id = ARGV[i]
  local ck = ckey(id)
  local f = redis.call('HMGET', ck, 'owner', 'slot')
  redis.call('ZREM', Q, id)
  if redis.call('ZREM', DQ, id) == 1 then left = true end
  if f[1] then
    redis.call('DEL', ck)
    free_slot(id, f[2])
    deleted[#deleted + 1] = f[1]
    if string.sub(flags, 1, 1) == '1' then redis.call('PUBLISH', 'disco:gone', 'c ' .. f[1] .. ' ' .. ck) end
  end
end
if left then redis.call('PUBLISH', CH, '+d') end
if #deleted == 1 then return {'gone'} end
if string.find(flags, 'p', 2, true) then redis.call('HDEL', TOK, 'phase') end
notify((head()))
return deleted
