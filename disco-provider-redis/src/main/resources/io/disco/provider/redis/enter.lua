-- Registers a double barrier participant (create '1') or checks one (create '0'), and opens the barrier once
-- 'participants' are registered at once. A participant is a claim key 'c:<id>' of kind 'd' with its owner's TTL (live
-- while the key exists, as every claim: its owner renews it) and a member of 'dq' scored by its registration sequence
-- (the token record's 'dseq', strictly increasing per name). The token record's 'dopen' is the last sequence handed
-- out when the barrier last opened: a participant whose sequence is not above it was registered when it opened.
-- ARGV: id, owner, meta, ttl ms, participants, create.
-- Answers {'open'} | {'wait', live participants} | {'refused', live participants with this one} (one too many:
--       nothing written) | {'gone'} (checked: its key is gone, and the barrier did not open while it was registered)
local id, owner, n = ARGV[1], ARGV[2], tonumber(ARGV[5])
local ck = ckey(id)
local seq = redis.call('ZSCORE', DQ, id)
if ARGV[6] == '1' and not seq then
  local live = participants(nil)
  if live + 1 > n then return {'refused', live + 1} end
  seq = redis.call('HINCRBY', TOK, 'dseq', 1)
  redis.call('HSET', ck, 'owner', owner, 'kind', 'd', 'token', '0', 'meta', ARGV[3]) -- token: never handed one
  redis.call('PEXPIRE', ck, ARGV[4])
  redis.call('ZADD', DQ, seq, id)
end
if not seq then return {'gone'} end
if tonumber(redis.call('HGET', TOK, 'dopen') or '0') >= tonumber(seq) then return {'open'} end
if redis.call('HGET', ck, 'owner') ~= owner then
  redis.call('ZREM', DQ, id)
  return {'gone'}
end
local live = participants(nil)
if live < n then return {'wait', live} end
-- the count is complete: open for every participant registered now, and wake them
redis.call('HSET', TOK, 'dopen', redis.call('HGET', TOK, 'dseq'))
redis.call('PUBLISH', CH, '+d')
return {'open'}
