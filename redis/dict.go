package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/crawlkeeper/crawlkeeper"
	goredis "github.com/redis/go-redis/v9"
)

// The target dictionary lives in many small hashes, which Redis stores as
// listpacks (a flat array of entries, a few bytes of overhead each)
// instead of hash tables (about 90 bytes per entry): its own memory
// optimisation guide describes the pattern. A listpack stays a listpack
// while it has at most hash-max-listpack-entries entries (128 by default)
// and no value longer than hash-max-listpack-value bytes (64); the layout
// keeps every hash inside both limits:
//
//	P:dict:i:K     hash   id → name, for the ids K*128 .. K*128+127
//	P:dict:long    hash   id → name, for names longer than the listpack
//	                      value limit (read from the server at open), so
//	                      that one long name never turns a bucket into a
//	                      hash table
//	P:dict:n:B     hash   name digest → id, name bucket B
//	P:dict:nb      string how many name buckets exist
//	P:dict:collide hash   name → id, for names whose digest was taken in
//	                      their bucket by another name
//	P:target_next  string the next id (ids are dense from 0)
//
// A name's bucket and digest come from the SHA-1 of the name (redis.sha1hex
// in the scripts): its first 48 bits address a bucket, the next 23 bits are
// the digest (stored as a small integer, 4 bytes in a listpack). A lookup
// reads the digest's id and checks the name of that id; a digest taken by
// another name sends the name to P:dict:collide, a rare case handled by
// design (about one name in 100,000 at 40 names a bucket). The number of
// name buckets grows with the dictionary by linear hashing: one bucket is
// split in two for every nameLoad names added, so buckets hold nameLoad
// to 2×nameLoad names on average, under 128 with a wide margin, and no
// step ever rehashes more than one bucket.
const (
	// idsPerKey is how many ids one P:dict:i hash holds: the default
	// hash-max-listpack-entries.
	idsPerKey = 128
	// nameLoad is the names per name bucket the dictionary grows at
	// (text, as the scripts spell it).
	nameLoad = "40"
	// defaultLongName is the default hash-max-listpack-value.
	defaultLongName = 64
)

// luaDict is the dictionary's Lua, shared by the scripts that read or
// extend it. P is the key prefix with its ':'.
const luaDict = `
local P = ARGV[1]
local function nameof(id)
  local n = redis.call('HGET', P .. 'dict:i:' .. math.floor(id / 128), id % 128)
  if not n then n = redis.call('HGET', P .. 'dict:long', id) end
  return n
end
local function hashof(name)
  local h = redis.sha1hex(name)
  return tonumber(string.sub(h, 1, 12), 16), tonumber(string.sub(h, 13, 18), 16) % 8388608
end
local function level(nb)
  local l = 1
  while l * 2 <= nb do l = l * 2 end
  return l
end
local function addr(h, nb)
  local l = level(nb)
  local a = h % (2 * l)
  if a >= nb then a = h % l end
  return a
end
local function nbuckets()
  return tonumber(redis.call('GET', P .. 'dict:nb') or '1')
end
-- find returns the id of name, or nil with its bucket key, digest and
-- whether the digest is taken.
local function find(name, nb)
  local h, d = hashof(name)
  local bk = P .. 'dict:n:' .. addr(h, nb)
  local id = redis.call('HGET', bk, d)
  if id and nameof(tonumber(id)) == name then return tonumber(id) end
  -- Names whose digest was taken live in the collide hash; after a split
  -- their bucket may no longer hold the digest at all.
  local c = redis.call('HGET', P .. 'dict:collide', name)
  if c then return tonumber(c) end
  return nil, bk, d, id ~= false
end
-- split adds name bucket nb, moving the names of its parent that now
-- address it; returns the new number of buckets.
local function split(nb)
  local l = level(nb)
  local pk, nk = P .. 'dict:n:' .. (nb - l), P .. 'dict:n:' .. nb
  local flat = redis.call('HGETALL', pk)
  for i = 1, #flat, 2 do
    local name = nameof(tonumber(flat[i + 1]))
    if not name then return redis.error_reply('dictionary id ' .. flat[i + 1] .. ' has no name') end
    if hashof(name) % (2 * l) == nb then
      redis.call('HDEL', pk, flat[i])
      redis.call('HSET', nk, flat[i], flat[i + 1])
    end
  end
  redis.call('SET', P .. 'dict:nb', nb + 1)
  return nb + 1
end
-- put stores a new (id, name): name → id under its digest (or in the
-- collide hash), id → name in its id hash (or the long hash), and grows
-- the buckets to the dictionary's size count.
local function put(id, name, bk, d, taken, long, count, nb)
  if string.len(name) > long then
    redis.call('HSET', P .. 'dict:long', id, name)
  else
    redis.call('HSET', P .. 'dict:i:' .. math.floor(id / 128), id % 128, name)
  end
  if taken then
    redis.call('HSET', P .. 'dict:collide', name, id)
  else
    redis.call('HSET', bk, d, id)
  end
  while nb * ` + nameLoad + ` < count do nb = split(nb) end
  return nb
end
`

// dictIDs returns the ids of names (ARGV[4..]), in order. With ARGV[2]
// "1" unknown names get the next ids; with "0" they answer -1. ARGV[3] is
// the longest name kept in an id hash. The last element is the number of
// names added.
var dictIDs = goredis.NewScript(luaDict + `
local add, long = ARGV[2] == '1', tonumber(ARGV[3])
local nb = nbuckets()
local out, added = {}, 0
for i = 4, #ARGV do
  local name = ARGV[i]
  local id, bk, d, taken = find(name, nb)
  if not id then
    if add then
      id = redis.call('INCR', P .. 'target_next') - 1
      nb = put(id, name, bk, d, taken, long, id + 1, nb)
      added = added + 1
    else
      id = -1
    end
  end
  table.insert(out, id)
end
table.insert(out, added)
return out
`)

// dictNames returns the names of the ids ARGV[2..], false for an id
// without one.
var dictNames = goredis.NewScript(luaDict + `
local out = {}
for i = 2, #ARGV do
  out[i - 1] = nameof(tonumber(ARGV[i])) or false
end
return out
`)

// dictMigrate copies (id, name) pairs (ARGV[4..], alternating) of the
// first layout into the dictionary, which is idempotent, and records in
// P:dict:migrated how far the copy has got. ARGV[2] is the first id of
// the chunk, ARGV[3] the longest name kept in an id hash.
var dictMigrate = goredis.NewScript(luaDict + `
local long = tonumber(ARGV[3])
local nb = nbuckets()
local last = tonumber(ARGV[2])
for i = 4, #ARGV, 2 do
  local id, name = tonumber(ARGV[i]), ARGV[i + 1]
  local have, bk, d, taken = find(name, nb)
  if have and have ~= id then
    return redis.error_reply('name ' .. name .. ' has ids ' .. have .. ' and ' .. id)
  end
  if not have then nb = put(id, name, bk, d, taken, long, id + 1, nb) end
  last = id + 1
end
local cur = tonumber(redis.call('GET', P .. 'dict:migrated') or '0')
if last > cur then redis.call('SET', P .. 'dict:migrated', last) end
return last
`)

// longName reads the server's hash-max-listpack-value: names longer than
// it go to P:dict:long. A server that refuses CONFIG (some hosted ones
// do) is taken to have the default.
func longName(ctx context.Context, c *goredis.Client) int {
	v, err := c.ConfigGet(ctx, "hash-max-listpack-value").Result()
	if err != nil {
		return defaultLongName
	}
	n, err := strconv.Atoi(v["hash-max-listpack-value"])
	if err != nil || n <= 0 {
		return defaultLongName
	}
	return n
}

// dictArgs returns a script's leading arguments.
func (m *Monitor) dictArgs(extra ...any) []any {
	return append([]any{m.prefix + ":"}, extra...)
}

// lookupIDs returns the ids of names (-1 for unknown ones), adding
// unknown names when add is set, and how many it added.
func (m *Monitor) lookupIDs(ctx context.Context, names []string, add bool) ([]int64, int, error) {
	flag := "0"
	if add {
		flag = "1"
	}
	out := make([]int64, 0, len(names))
	added := 0
	for i := 0; i < len(names); i += chunk {
		part := names[i:min(i+chunk, len(names))]
		args := m.dictArgs(flag, m.longName)
		for _, n := range part {
			args = append(args, n)
		}
		res, err := dictIDs.Run(ctx, m.c, nil, args...).Int64Slice()
		if err != nil {
			return nil, 0, err
		}
		if len(res) != len(part)+1 {
			return nil, 0, fmt.Errorf("dictionary answered %d ids for %d names", len(res)-1, len(part))
		}
		out = append(out, res[:len(part)]...)
		added += int(res[len(part)])
	}
	return out, added, nil
}

// idOf returns a target's id, or ENOTFOUND.
func (m *Monitor) idOf(ctx context.Context, name string) (uint32, error) {
	m.cacheMu.RLock()
	id, ok := m.cache[name]
	m.cacheMu.RUnlock()
	if ok {
		return id, nil
	}
	ids, _, err := m.lookupIDs(ctx, []string{name}, false)
	if err != nil {
		return 0, fail("read targets", err)
	}
	if ids[0] < 0 {
		return 0, crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "target %q is not in the dictionary: queue or mark it first", name)
	}
	return uint32(ids[0]), nil
}

// migrateStep, when set (by tests), is called after each chunk the
// dictionary migration copied, with the next id to copy; an error stops
// the migration as a killed process would.
var migrateStep func(next int64) error

// migrateChunk is how many names one migration script copies.
const migrateChunk = 5000

// migrateDict moves a dictionary of the first layout (P:targets name → id
// and P:target_names id → name, two hash tables) into the bucketed one,
// in chunks of ids, each copied by one atomic script that records how far
// the copy has got (P:dict:migrated): a migration killed at any point
// resumes where it stopped, and copying a chunk twice changes nothing.
// The old hashes are deleted once everything is copied.
func (m *Monitor) migrateDict(ctx context.Context) error {
	next, err := m.counter(ctx, m.key("target_next"))
	if err != nil {
		return err
	}
	from, err := m.counter(ctx, m.key("dict", "migrated"))
	if err != nil {
		return err
	}
	names := m.key("target_names")
	for from < next {
		to := min(from+migrateChunk, next)
		fields := make([]string, 0, to-from)
		for id := from; id < to; id++ {
			fields = append(fields, strconv.FormatInt(id, 10))
		}
		vals, err := m.c.HMGet(ctx, names, fields...).Result()
		if err != nil {
			return fmt.Errorf("read %s: %w", names, err)
		}
		args := m.dictArgs(from, m.longName)
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s has no name for id %s below %s: the dictionary is damaged", names, fields[i], m.key("target_next"))
			}
			args = append(args, fields[i], s)
		}
		if err := dictMigrate.Run(ctx, m.c, nil, args...).Err(); err != nil {
			return fmt.Errorf("copy dictionary ids %d to %d: %w", from, to-1, err)
		}
		from = to
		if migrateStep != nil {
			if err := migrateStep(from); err != nil {
				return err
			}
		}
	}
	if err := m.c.Unlink(ctx, m.key("targets"), names).Err(); err != nil {
		return fmt.Errorf("delete the old dictionary: %w", err)
	}
	return nil
}

// counter reads an integer string key; a missing key is 0.
func (m *Monitor) counter(ctx context.Context, key string) (int64, error) {
	n, err := m.c.Get(ctx, key).Int64()
	if errors.Is(err, goredis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", key, err)
	}
	return n, nil
}
