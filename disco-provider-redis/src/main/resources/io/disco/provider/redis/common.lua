-- Shared by every script of disco's Redis provider (prepended to each): the keys of one name, all under the hash
-- tag of the name ('disco:{<name>}:'), so that Redis Cluster keeps them in one slot. KEYS[1] is always the token
-- record 'disco:{<name>}:tok' and KEYS[2] the queue 'disco:{<name>}:q' (see RedisKeys).
local P = string.sub(KEYS[1], 1, -4)
local TOK, Q, SLOTS, CH, LOG = P .. 'tok', P .. 'q', P .. 'slots', P .. 'ch', P .. 'log'
local BAR, DQ = P .. 'bar', P .. 'dq'
local function ckey(id) return P .. 'c:' .. id end

-- The admitted claims of the queue (those that hold, or may hold now), in queue order, as {id, kind, token}: a lock's
-- or an election's first live claim; the readers before the first live writer, or that writer; a semaphore's first
-- 'limit'. Walks the queue from its head only as far as that: a member it passes whose claim key is gone (expired,
-- broken) is dead and is removed from the queue (dead claims never block; those further back are removed once the
-- head reaches them). Its work is the admitted claims plus the dead ones it removes, whatever the queue's length.
-- Returns the admitted claims and whether any dead one was removed.
local function head()
  local admitted, removed = {}, false
  local cap = 0 -- how many may be admitted, from the first live claim's kind: -1 the readers up to the first writer
  local start = 0
  while true do
    local members = redis.call('ZRANGE', Q, start, start + 3)
    if #members == 0 then return admitted, removed end
    local dead = 0
    for _, m in ipairs(members) do
      local f = redis.call('HMGET', ckey(m), 'kind', 'token')
      if not f[1] then
        redis.call('ZREM', Q, m)
        removed = true
        dead = dead + 1
      else
        if #admitted == 0 then
          if f[1] == 'p' then
            cap = tonumber(redis.call('HGET', TOK, 'limit') or '1')
          elseif f[1] == 'r' then
            cap = -1
          else
            cap = 1
          end
        elseif cap < 0 and f[1] ~= 'r' then
          return admitted, removed
        end
        admitted[#admitted + 1] = {m, f[1], f[2]}
        if cap > 0 and #admitted >= cap then return admitted, removed end
      end
    end
    start = start + #members - dead
  end
end

-- Wakes the waiting claims among the admitted ones (but 'except', whose own script answers it): publishes their ids
-- on the name's channel.
local function notify(admitted, except)
  local ids = {}
  for i = 1, #admitted do
    if admitted[i][3] == '0' and admitted[i][1] ~= except then ids[#ids + 1] = admitted[i][1] end
  end
  if #ids > 0 then redis.call('PUBLISH', CH, table.concat(ids, ' ')) end
end

-- Frees the semaphore slot 'slot' if claim 'id' holds it.
local function free_slot(id, slot)
  if slot and slot ~= '' and tonumber(slot) >= 0 and redis.call('HGET', SLOTS, slot) == id then
    redis.call('HDEL', SLOTS, slot)
  end
end

-- The live participants of the name's double barrier registered at sequence 'upto' or before (nil: all): the members
-- of 'dq' whose claim key exists. A member whose key is gone (expired with its owner, deleted) is removed from 'dq'.
-- Returns how many are live and the soonest PTTL among them (-1: none has a TTL), the instant one may expire: no
-- script runs when a key expires, so a waiter checks again then.
local function participants(upto)
  local members
  if upto then members = redis.call('ZRANGEBYSCORE', DQ, '-inf', upto) else members = redis.call('ZRANGE', DQ, 0, -1) end
  local live, soonest = 0, -1
  for _, m in ipairs(members) do
    local t = redis.call('PTTL', ckey(m))
    if t == -2 then
      redis.call('ZREM', DQ, m)
    else
      live = live + 1
      if t >= 0 and (soonest < 0 or t < soonest) then soonest = t end
    end
  end
  return live, soonest
end
