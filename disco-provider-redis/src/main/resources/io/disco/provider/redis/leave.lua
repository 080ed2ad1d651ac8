-- A double barrier participant leaves (upto ''): deletes its key (if it is still there), removes it from 'dq' and
-- wakes the barrier's waiters; then tells whether any participant registered at that moment (sequence up to 'upto',
-- the last one handed out) is still there. A re-check passes the 'upto' its leave answered: participants registered
-- later belong to the next round. ARGV: id, owner, upto or ''.
-- Answers {'gone'} (the first call, when the participant's key was already gone: expired or deleted) |
-- {'left', upto} | {'wait', upto, the soonest PTTL among those still there (-1: none has a TTL)}
local id, owner, upto = ARGV[1], ARGV[2], ARGV[3]
if upto == '' then
  upto = redis.call('HGET', TOK, 'dseq') or '0'
  local ck = ckey(id)
  local mine = redis.call('HGET', ck, 'owner') == owner
  if mine then redis.call('DEL', ck) end
  if redis.call('ZREM', DQ, id) == 1 then redis.call('PUBLISH', CH, '+d') end
  if not mine then return {'gone'} end
end
local live, soonest = participants(upto)
if live == 0 then return {'left', upto} end
return {'wait', upto, soonest}
