package atrium

import (
	"sync"
	"time"
)

// Defaults of the token cache: a token counts as expired this long before its expires_at, and a
// credential without expires_at (a static key) is reused this long, so a revocation reaches this
// process within that time.
const (
	DefaultExpirySkew = 30 * time.Second
	DefaultStaticTTL  = 60 * time.Second
)

// tokenCache keeps tokens per connection and lets one fetch per connection be in flight: callers
// arriving meanwhile wait for its result instead of asking the gateway again.
type tokenCache struct {
	skew      time.Duration
	staticTTL time.Duration
	now       func() time.Time

	mu       sync.Mutex
	entries  map[string]cachedToken
	inFlight map[string]*pendingToken
}

type cachedToken struct {
	token       *ConnectionToken
	usableUntil time.Time
}

type pendingToken struct {
	done  chan struct{}
	token *ConnectionToken
	err   error
}

func newTokenCache(skew, staticTTL time.Duration, now func() time.Time) *tokenCache {
	return &tokenCache{
		skew:      skew,
		staticTTL: staticTTL,
		now:       now,
		entries:   map[string]cachedToken{},
		inFlight:  map[string]*pendingToken{},
	}
}

// get returns the cached token, or joins (or starts) the one fetch in flight for key. With
// bypass, it neither reads the cache nor joins: it fetches, and the result replaces the entry.
func (c *tokenCache) get(key string, bypass bool, fetch func() (*ConnectionToken, error)) (*ConnectionToken, error) {
	c.mu.Lock()
	if !bypass {
		if entry, ok := c.entries[key]; ok && c.now().Before(entry.usableUntil) {
			c.mu.Unlock()
			return entry.token, nil
		}
		if pending, ok := c.inFlight[key]; ok {
			c.mu.Unlock()
			<-pending.done
			return pending.token, pending.err
		}
	}
	pending := &pendingToken{done: make(chan struct{})}
	c.inFlight[key] = pending
	c.mu.Unlock()

	pending.token, pending.err = fetch()

	c.mu.Lock()
	if pending.err != nil {
		delete(c.entries, key)
	} else {
		c.store(key, pending.token)
	}
	if c.inFlight[key] == pending {
		delete(c.inFlight, key)
	}
	c.mu.Unlock()
	close(pending.done)
	return pending.token, pending.err
}

func (c *tokenCache) store(key string, token *ConnectionToken) {
	now := c.now()
	usableUntil := now.Add(c.staticTTL)
	if token.ExpiresAt != "" {
		if expiresAt, err := time.Parse(time.RFC3339Nano, token.ExpiresAt); err == nil {
			usableUntil = expiresAt.Add(-c.skew)
		}
	}
	if usableUntil.After(now) {
		c.entries[key] = cachedToken{token: token, usableUntil: usableUntil}
	} else {
		delete(c.entries, key)
	}
}

func (c *tokenCache) delete(key string) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}
