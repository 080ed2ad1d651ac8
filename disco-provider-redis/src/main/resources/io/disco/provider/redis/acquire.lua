-- Enqueues a claim (or adopts it, when an earlier copy of this call was applied) and admits it if its turn has
-- come, assigning its token. ARGV: id, owner, kind (x lock, e election, r read, w write, p permit), meta, value,
-- ttl ms, create ('1' on the first call; '0' on re-checks: a claim found gone is never re-created), the replication
-- id the client read, the epoch it read for that replication id, the semaphore's limit.
-- Answers {'admitted', token, slot} | {'wait', pttl of the soonest admitted claim (-1: none has a TTL), queue
--       members ahead (dead ones further back included until the head reaches them)}
--       | {'gone'} | {'retry', why, replid} | {'refused', why}
local id, owner, kind = ARGV[1], ARGV[2], ARGV[3]
local ck = ckey(id)
local f = redis.call('HMGET', ck, 'owner', 'token', 'slot')
local created = false
if not f[1] then
  if ARGV[7] ~= '1' then
    redis.call('ZREM', Q, id)
    return {'gone'}
  end
  if kind == 'p' then
    local limit = redis.call('HGET', TOK, 'limit')
    if limit and limit ~= ARGV[10] then return {'refused', 'the semaphore exists with limit ' .. limit} end
  end
  local qs = redis.call('HINCRBY', TOK, 'qseq', 1)
  redis.call('HSET', ck, 'owner', owner, 'kind', kind, 'token', '0', 'meta', ARGV[4], 'value', ARGV[5])
  redis.call('PEXPIRE', ck, ARGV[6])
  redis.call('ZADD', Q, qs, id)
  created = true
elseif f[1] ~= owner then
  return {'gone'}
elseif f[2] ~= '0' then
  return {'admitted', f[2], f[3] or '-1'}
end

if not created and not redis.call('ZSCORE', Q, id) then
  redis.call('DEL', ck)
  return {'gone'}
end
local admitted, removed = head()
local mine = false
for i = 1, #admitted do
  if admitted[i][1] == id then mine = true break end
end
if not mine then
  if removed then notify(admitted) end
  -- until the soonest admitted claim would expire: no script runs when a holder dies, but one that expires lets
  -- the next claim in (a claim ahead that is not admitted blocks nobody when it expires)
  local wait = -1
  for i = 1, #admitted do
    local t = redis.call('PTTL', ckey(admitted[i][1]))
    if t >= 0 and (wait < 0 or t < wait) then wait = t end
  end
  return {'wait', wait, redis.call('ZRANK', Q, id)}
end

-- Admitted. The token is assigned only on the primary whose replication id the client read, with the epoch it
-- read for it (see TokenLineage): a restart or a promotion changes the replication id.
local info = redis.call('INFO', 'replication')
if not string.find(info, 'role:master', 1, true) then
  if removed then notify(admitted, id) end
  return {'retry', 'not-primary', ''}
end
local replid = string.match(info, 'master_replid:(%x+)')
if replid ~= ARGV[8] then
  if removed then notify(admitted, id) end
  return {'retry', 'replid-changed', replid or ''}
end

local function next_token(E)
  local t = redis.call('HMGET', TOK, 'epoch', 'gen', 'seq', 'replid')
  local epoch, gen, seq = tonumber(t[1]), tonumber(t[2]), tonumber(t[3])
  if not t[4] then
    epoch, gen, seq = E, 0, 1                -- the name's first token
  elseif E > epoch then
    -- a new promotion; also of this same unbroken primary (its replication id unchanged), promoted again before
    -- the sentinels demoted it, while another primary issued in an epoch in between
    epoch, gen, seq = E, 0, 1
  elseif t[4] == replid then
    seq = seq + 1                            -- the same unbroken primary as the last grant
  elseif E == epoch then
    gen, seq = gen + 1, 1                    -- the same epoch's primary, restarted (its AOF kept every grant)
  else
    return nil, 'stale-epoch: the record is at epoch ' .. epoch .. ', the client read ' .. E
  end
  if seq > 4294967295 then return nil, 'exhausted: the sequence of epoch ' .. epoch .. ' generation ' .. gen end
  if gen > 2047 then return nil, 'exhausted: the generations (restarts) of epoch ' .. epoch end
  if epoch > 1048575 then return nil, 'exhausted: the epochs' end
  redis.call('HSET', TOK, 'epoch', epoch, 'gen', gen, 'seq', seq, 'replid', replid)
  return epoch .. ':' .. gen .. ':' .. seq
end

local token
if kind == 'r' then
  local ph = redis.call('HMGET', TOK, 'phase', 'replid', 'epoch')
  -- a reader of the phase: its token, unless a promotion came since (the phase's token is then below the new epoch)
  if ph[1] and ph[2] == replid and tonumber(ph[3]) >= tonumber(ARGV[9]) then token = ph[1] end
end
if not token then
  local err
  token, err = next_token(tonumber(ARGV[9]))
  if not token then
    if removed then notify(admitted, id) end
    return {'refused', err}
  end
  if kind == 'r' then
    redis.call('HSET', TOK, 'phase', token)
  elseif kind == 'w' then
    redis.call('HDEL', TOK, 'phase')
  end
end

local slot = -1
if kind == 'p' then
  for i = 0, tonumber(ARGV[10]) - 1 do
    local h = redis.call('HGET', SLOTS, i)
    if not h or h == id or redis.call('EXISTS', ckey(h)) == 0 then
      slot = i
      redis.call('HSET', SLOTS, i, id)
      break
    end
  end
  if slot < 0 then return {'retry', 'no-free-slot', ''} end
end
local now = redis.call('TIME')
redis.call('HSET', ck, 'token', token, 'slot', slot, 'since', now[1] * 1000 + math.floor(now[2] / 1000), 'pv', 0)
if kind == 'e' then
  redis.call('XADD', LOG, 'MAXLEN', '~', 64, '*', 'token', token, 'v', 0, 'id', id, 'value', ARGV[5])
  redis.call('PUBLISH', CH, '+log')
end
if removed then notify(admitted, id) end
return {'admitted', token, tostring(slot)}
