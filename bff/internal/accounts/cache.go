package accounts

import (
	"container/list"
	"sync"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// refCache keeps opened accounts (member and exchange -> AccountRef) for a short time, at most size of them, least
// recently used out first.
type refCache struct {
	mu    sync.Mutex
	size  int
	ttl   time.Duration
	now   func() time.Time
	order *list.List // front: most recently used; values *refEntry
	byKey map[string]*list.Element
}

type refEntry struct {
	key     string
	ref     *exchangev1.AccountRef
	expires time.Time
}

func newRefCache(size int, ttl time.Duration) *refCache {
	return &refCache{size: size, ttl: ttl, now: time.Now, order: list.New(), byKey: map[string]*list.Element{}}
}

func cacheKey(memberID, exchange string) string { return memberID + "\x00" + exchange }

func (c *refCache) get(memberID, exchange string) (*exchangev1.AccountRef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[cacheKey(memberID, exchange)]
	if !ok {
		return nil, false
	}
	e := el.Value.(*refEntry)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.byKey, e.key)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.ref, true
}

func (c *refCache) put(memberID, exchange string, ref *exchangev1.AccountRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := cacheKey(memberID, exchange)
	if el, ok := c.byKey[key]; ok {
		c.order.Remove(el)
	}
	c.byKey[key] = c.order.PushFront(&refEntry{key: key, ref: ref, expires: c.now().Add(c.ttl)})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*refEntry).key)
	}
}

func (c *refCache) drop(memberID, exchange string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[cacheKey(memberID, exchange)]; ok {
		c.order.Remove(el)
		delete(c.byKey, el.Value.(*refEntry).key)
	}
}

func (c *refCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.byKey)
}

func (c *refCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
