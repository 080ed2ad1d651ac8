-- Lowers the barrier of a name, whoever raised it: deletes its key 'bar' and, if this call deleted it, wakes its
-- waiters ('+b' on the name's channel; a waiter that missed it finds the key gone at its next check).
-- Answers {'lowered'} | {'down'} (it was not up)
if redis.call('DEL', BAR) == 0 then return {'down'} end
redis.call('PUBLISH', CH, '+b')
return {'lowered'}
