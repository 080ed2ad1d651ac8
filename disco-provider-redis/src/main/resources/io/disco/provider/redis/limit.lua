-- Records a semaphore's limit, or reads the one recorded. ARGV: limit. Answers {recorded limit}
redis.call('HSETNX', TOK, 'limit', ARGV[1])
return {redis.call('HGET', TOK, 'limit')}
