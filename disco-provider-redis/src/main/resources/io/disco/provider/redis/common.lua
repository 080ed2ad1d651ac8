-- Shared by every script of disco's Redis provider (prepended to each): the keys of one name, all under the hash
-- tag of the name ('disco:{<name>}:'), so that Redis Cluster keeps them in one slot. KEYS[1] is always the token
-- record 'disco:{<name>}:tok' and KEYS[2] the queue 'disco:{<name>}:q' (see RedisKeys).
local P = string.sub(KEYS[1], 1, -4)
local TOK, Q, SLOTS, CH, LOG = P .. 'tok', P .. 'q', P .. 'slots', P .. 'ch', P .. 'log'
local function ckey(id) return P .. 'c:' .. id end

-- The live claims of the queue, in queue order, as {id, kind, token}; a member whose claim key is gone (expired,
-- broken) is dead and is removed from the queue. Returns the live claims and whether any dead one was removed.
local function scan()
  local members = redis.call('ZRANGE', Q, 0, -1)
  local live, removed = {}, false
  for _, m in ipairs(members) do
    local f = redis.call('HMGET', ckey(m), 'kind', 'token')
    if not f[1] then
      redis.call('ZREM', Q, m)
      removed = true
    else
      live[#live + 1] = {m, f[1], f[2]}
    end
  end
  return live, removed
end

-- How many live claims, from the head, are admitted (hold, or may hold now): a lock's or an election's first; the
-- readers before the first writer, or the first writer; a semaphore's first 'limit'.
local function admitted_count(live)
  local n = #live
  if n == 0 then return 0 end
  local k = live[1][2]
  if k == 'p' then
    return math.min(n, tonumber(redis.call('HGET', TOK, 'limit') or '1'))
  elseif k == 'r' then
    local c = 0
    for i = 1, n do
      if live[i][2] == 'r' then c = i else break end
    end
    return c
  end
  return 1
end

-- Wakes the waiting claims that are now admitted: publishes their ids on the name's channel.
local function notify(live)
  local c = admitted_count(live)
  local ids = {}
  for i = 1, c do
    if live[i][3] == '0' then ids[#ids + 1] = live[i][1] end
  end
  if #ids > 0 then redis.call('PUBLISH', CH, table.concat(ids, ' ')) end
end

-- Frees the semaphore slot 'slot' if claim 'id' holds it.
local function free_slot(id, slot)
  if slot and slot ~= '' and tonumber(slot) >= 0 and redis.call('HGET', SLOTS, slot) == id then
    redis.call('HDEL', SLOTS, slot)
  end
end
