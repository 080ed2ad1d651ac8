-- Reads a double barrier's live participants in one snapshot, writing nothing: per member of 'dq' in registration
-- order whose claim key exists, its id and owner.
local out = {}
for _, m in ipairs(redis.call('ZRANGE', DQ, 0, -1)) do
  local owner = redis.call('HGET', ckey(m), 'owner')
  if owner then
    out[#out + 1] = m
    out[#out + 1] = owner
  end
end
return out
