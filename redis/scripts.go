package redis

import goredis "github.com/redis/go-redis/v9"

// Lua scripts run atomically in Redis, so a merge never interleaves with a
// mark into the bucket it merges, and counts read in one script agree with
// each other. Scripts build the keys of one round from its key prefix
// (ARGV[1], "<prefix>:round:<name>:"), which a standalone Redis allows.

// luaEffDone is shared by the scripts that need a round's done set
// including the buckets not merged yet: it ORs them into dst.
const luaEffDone = `
local function effdone(p, dst)
  local srcs = {p .. 'done'}
  for _, st in ipairs(redis.call('ZRANGE', p .. 'open', 0, -1)) do
    table.insert(srcs, p .. 'bucket:' .. st)
  end
  redis.call('BITOP', 'OR', dst, unpack(srcs))
end
-- andnot stores a minus b in dst; Redis 7 has no BITOP ANDNOT, and
-- a XOR (a AND b) is the same set.
local function andnot(dst, a, b)
  redis.call('BITOP', 'AND', dst, a, b)
  redis.call('BITOP', 'XOR', dst, a, dst)
end
-- page returns up to limit offsets of set bits in key from bit 'from'.
local function page(key, from, limit)
  local out = {}
  local len = redis.call('STRLEN', key) * 8
  while #out < limit and from < len do
    local pos = redis.call('BITPOS', key, 1, from, -1, 'BIT')
    if pos < 0 then break end
    table.insert(out, pos)
    from = pos + 1
  end
  return out
end
`

// ensureRound creates a round if needed and returns its bucket length.
// KEYS: rounds zset. ARGV: round prefix, round name, created (µs),
// requested bucket (s, 0 = keep), default bucket (s).
var ensureRound = goredis.NewScript(`
local p, name = ARGV[1], ARGV[2]
local created, want, def = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local cur = redis.call('HGET', p .. 'meta', 'bucket')
if not cur then
  if want == 0 then want = def end
  redis.call('HSET', p .. 'meta', 'bucket', want, 'created', created)
  redis.call('ZADD', KEYS[1], created, name)
  return want
end
cur = tonumber(cur)
if want ~= 0 and want ~= cur then
  if redis.call('HLEN', p .. 'buckets') > 0 then
    return -cur
  end
  redis.call('HSET', p .. 'meta', 'bucket', want)
  return want
end
return cur
`)

// luaAddIDs adds a batch of ids to a bitmap key. The batch comes either
// as a bitmap in Redis bit order (mode 'b': one BITOP OR, whatever the
// batch size) or as a list of offsets (mode 'i': one SETBIT each, for
// batches too sparse for a bitmap). ARGV[a] is the mode, ARGV[a+1] a
// temporary key and ARGV[a+2..] the bitmap or the offsets.
const luaAddIDs = `
local function addids(key, a)
  if ARGV[a] == 'b' then
    redis.call('SET', ARGV[a + 1], ARGV[a + 2])
    redis.call('BITOP', 'OR', key, key, ARGV[a + 1])
    redis.call('DEL', ARGV[a + 1])
  else
    for i = a + 2, #ARGV do redis.call('SETBIT', key, ARGV[i], 1) end
  end
end
`

// setBits adds ids to the bitmap ARGV[1] and returns its new count.
// ARGV[2..]: as luaAddIDs.
var setBits = goredis.NewScript(luaAddIDs + `
addids(ARGV[1], 2)
return redis.call('BITCOUNT', ARGV[1])
`)

// markDone records done ids in one bucket. ARGV: round prefix, bucket
// start, then the ids as luaAddIDs takes them. An open or new bucket takes
// them; a merged bucket whose set is kept takes them and passes them to
// the round's done set; a dropped bucket leaves them to the round's done
// set only.
var markDone = goredis.NewScript(luaAddIDs + `
local p, st = ARGV[1], ARGV[2]
local bk = p .. 'bucket:' .. st
local kept = redis.call('ZSCORE', p .. 'kept', st)
local open = redis.call('ZSCORE', p .. 'open', st)
local dropped = (not kept) and (not open) and redis.call('HEXISTS', p .. 'buckets', st) == 1
if not kept and not open and not dropped then
  redis.call('ZADD', p .. 'open', st, st)
end
if not dropped then addids(bk, 3) end
if kept or dropped then addids(p .. 'done', 3) end
if not dropped then
  redis.call('HSET', p .. 'buckets', st, redis.call('BITCOUNT', bk))
end
return 1
`)

// mergeRound folds finished buckets into done and drops old bucket sets.
// ARGV: round prefix, now (s), retention (s), write (1) or count (0),
// retention of a closed round (s), whether a later round exists (1/0),
// two temporary keys. The closed retention applies when it would drop a
// set the other keeps and the round is closed (nothing remaining, or a
// later round): then the round is counted, which is otherwise spared.
var mergeRound = goredis.NewScript(luaEffDone + `
local p = ARGV[1]
local now, ret, write = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'
local cret, later, t1, t2 = tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7], ARGV[8]
local blen = tonumber(redis.call('HGET', p .. 'meta', 'bucket') or '0')
local merged, dropped = 0, 0
if cret < ret then
  local starts = redis.call('ZRANGEBYSCORE', p .. 'kept', now - blen - ret + 1, now - blen - cret)
  if #starts == 0 then
    starts = redis.call('ZRANGEBYSCORE', p .. 'open', now - blen - ret + 1, now - blen - cret)
  end
  if #starts > 0 then
    local closed = later
    if not closed then
      effdone(p, t1)
      redis.call('BITOP', 'OR', t1, t1, p .. 'failed')
      andnot(t2, p .. 'queued', t1)
      closed = redis.call('BITCOUNT', t2) == 0
      redis.call('DEL', t1, t2)
    end
    if closed then ret = cret end
  end
end
for _, st in ipairs(redis.call('ZRANGEBYSCORE', p .. 'open', '-inf', now - blen)) do
  merged = merged + 1
  local bk = p .. 'bucket:' .. st
  if write then
    redis.call('BITOP', 'OR', p .. 'done', p .. 'done', bk)
    redis.call('HSET', p .. 'buckets', st, redis.call('BITCOUNT', bk))
    redis.call('ZREM', p .. 'open', st)
  end
  if tonumber(st) + blen + ret <= now then
    dropped = dropped + 1
    if write then redis.call('DEL', bk) end
  elseif write then
    redis.call('ZADD', p .. 'kept', st, st)
  end
end
for _, st in ipairs(redis.call('ZRANGEBYSCORE', p .. 'kept', '-inf', now - blen - ret)) do
  dropped = dropped + 1
  if write then
    redis.call('DEL', p .. 'bucket:' .. st)
    redis.call('ZREM', p .. 'kept', st)
  end
end
return {merged, dropped}
`)

// roundCounts returns queued, done, failed and remaining of a round.
// ARGV: round prefix, two temporary keys.
var roundCounts = goredis.NewScript(luaEffDone + `
local p, t1, t2 = ARGV[1], ARGV[2], ARGV[3]
effdone(p, t1)
local done = redis.call('BITCOUNT', t1)
redis.call('BITOP', 'AND', t2, p .. 'failed', t1)
local failed = redis.call('BITCOUNT', p .. 'failed') - redis.call('BITCOUNT', t2)
redis.call('BITOP', 'OR', t2, t1, p .. 'failed')
redis.call('BITOP', 'AND', t2, t2, p .. 'queued')
local queued = redis.call('BITCOUNT', p .. 'queued')
local remaining = queued - redis.call('BITCOUNT', t2)
redis.call('DEL', t1, t2)
return {queued, done, failed, remaining}
`)

// remainingPage returns up to limit ids queued and neither done nor
// failed, from bit 'from'. ARGV: round prefix, tmp1, tmp2, from, limit.
var remainingPage = goredis.NewScript(luaEffDone + `
local p, t1, t2 = ARGV[1], ARGV[2], ARGV[3]
effdone(p, t1)
redis.call('BITOP', 'OR', t1, t1, p .. 'failed')
andnot(t2, p .. 'queued', t1)
local out = page(t2, tonumber(ARGV[4]), tonumber(ARGV[5]))
redis.call('DEL', t1, t2)
return out
`)

// diffPage compares two rounds' done sets. ARGV: prefix a, prefix b, four
// temporary keys, from, limit. Returns count a−b, count b−a, then the ids
// of each page as two arrays.
var diffPage = goredis.NewScript(luaEffDone + `
local pa, pb, ta, tb, oa, ob = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local from, limit = tonumber(ARGV[7]), tonumber(ARGV[8])
effdone(pa, ta)
effdone(pb, tb)
andnot(oa, ta, tb)
andnot(ob, tb, ta)
local res = {redis.call('BITCOUNT', oa), redis.call('BITCOUNT', ob), page(oa, from, limit), page(ob, from, limit)}
redis.call('DEL', ta, tb, oa, ob)
return res
`)

// targetState returns, for each round prefix in ARGV[2..], queued, done,
// failed (0/1), the start of the earliest kept bucket holding the id (-1
// when none) and the failure reason. ARGV[1] is the id.
var targetState = goredis.NewScript(`
local id = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV do
  local p = ARGV[i]
  local q = redis.call('GETBIT', p .. 'queued', id)
  local d = redis.call('GETBIT', p .. 'done', id)
  local at = -1
  local starts = redis.call('ZRANGE', p .. 'kept', 0, -1)
  for _, st in ipairs(redis.call('ZRANGE', p .. 'open', 0, -1)) do table.insert(starts, st) end
  for _, st in ipairs(starts) do
    if redis.call('GETBIT', p .. 'bucket:' .. st, id) == 1 then
      if at < 0 or tonumber(st) < at then at = tonumber(st) end
    end
  end
  if at >= 0 then d = 1 end
  local f, reason = 0, ''
  if d == 0 then f = redis.call('GETBIT', p .. 'failed', id) end
  if f == 1 then reason = redis.call('HGET', p .. 'reasons', id) or '' end
  table.insert(out, {q, d, f, at, reason})
end
return out
`)

// observeFilled adds filled observations of one field while it needs
// samples. ARGV: field prefix, samples wanted, then pairs of target id + 1
// (0 = none) and record id.
var observeFilled = goredis.NewScript(`
local p, want = ARGV[1], tonumber(ARGV[2])
if redis.call('HGET', p, 'enough') == '1' then return 0 end
for i = 3, #ARGV, 2 do
  local tid = tonumber(ARGV[i])
  if tid > 0 then redis.call('SETBIT', p .. ':targets', tid - 1, 1) end
  if not redis.call('LPOS', p .. ':samples', ARGV[i + 1]) then
    redis.call('RPUSH', p .. ':samples', ARGV[i + 1])
  end
  if redis.call('LLEN', p .. ':samples') >= want then
    redis.call('HSET', p, 'enough', 1, 'targets', redis.call('BITCOUNT', p .. ':targets'))
    redis.call('DEL', p .. ':targets')
    return 1
  end
end
return 0
`)

// failedPage returns a page of a round's failed targets that were not
// done in it. ARGV: round prefix, the prefix of a round they must have
// failed in too (empty for none), three temporary keys, from, limit,
// whether they must be done in a later round (1/0), then the prefixes of
// the later rounds in order. Returns the count, the page's ids, their
// reasons, their reasons in the other round, and for each the position
// (from 1) of the first later round that did it (0 for none).
var failedPage = goredis.NewScript(luaEffDone + `
local p, pa, t1, t2, t3 = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local from, limit, doneLater = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8] == '1'
local later = {}
for i = 9, #ARGV do table.insert(later, ARGV[i]) end
local function isdone(lp, id)
  if redis.call('GETBIT', lp .. 'done', id) == 1 then return true end
  for _, st in ipairs(redis.call('ZRANGE', lp .. 'open', 0, -1)) do
    if redis.call('GETBIT', lp .. 'bucket:' .. st, id) == 1 then return true end
  end
  return false
end
effdone(p, t1)
andnot(t2, p .. 'failed', t1)
if pa ~= '' then
  effdone(pa, t1)
  andnot(t3, pa .. 'failed', t1)
  redis.call('BITOP', 'AND', t2, t2, t3)
end
if doneLater then
  redis.call('DEL', t3)
  for _, lp in ipairs(later) do
    effdone(lp, t1)
    redis.call('BITOP', 'OR', t3, t3, t1)
  end
  redis.call('BITOP', 'AND', t2, t2, t3)
end
local count = redis.call('BITCOUNT', t2)
local ids = page(t2, from, limit)
local reasons, also, donein = {}, {}, {}
for i, id in ipairs(ids) do
  reasons[i] = redis.call('HGET', p .. 'reasons', id) or ''
  also[i] = ''
  if pa ~= '' then also[i] = redis.call('HGET', pa .. 'reasons', id) or '' end
  donein[i] = 0
  if doneLater then
    for j, lp in ipairs(later) do
      if isdone(lp, id) then
        donein[i] = j
        break
      end
    end
  end
end
redis.call('DEL', t1, t2, t3)
return {count, ids, reasons, also, donein}
`)
