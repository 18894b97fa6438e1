// Package treecache downloads artifacts and reads them into configtree
// Trees, each artifact once however many Workspaces read it: the I/O
// beside configtree's pure reading and digesting.
package treecache

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/magos-dev/magos/apis/artifactdigest"
	"github.com/magos-dev/magos/controllers/internal/configtree"
)

// Cache reads artifacts into Trees, each artifact once however many
// Workspaces read it, and keeps the newest few.
type Cache struct {
	// Client downloads artifacts; nil is http.DefaultClient.
	Client *http.Client
	// MaxBytes is the largest artifact read (0: no limit).
	MaxBytes int64

	mu      sync.Mutex
	entries map[string]*cacheEntry // by artifact digest
	order   []string               // digests, oldest first
}

// cacheSize is how many artifacts' Trees a Cache keeps.
const cacheSize = 8

type cacheEntry struct {
	once sync.Once
	tree *configtree.Tree
	err  error
}

// Tree returns the Tree of the artifact at url whose digest is digest,
// downloading and checking it unless it was read before.
func (c *Cache) Tree(ctx context.Context, url, digest string) (*configtree.Tree, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	e, ok := c.entries[digest]
	if !ok {
		e = &cacheEntry{}
		c.entries[digest] = e
		c.order = append(c.order, digest)
		if len(c.order) > cacheSize {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.mu.Unlock()
	e.once.Do(func() { e.tree, e.err = c.read(ctx, url, digest) })
	if e.err != nil {
		c.forget(digest, e)
	}
	return e.tree, e.err
}

// forget drops a failed entry, so the next call tries again.
func (c *Cache) forget(digest string, e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[digest] != e {
		return
	}
	delete(c.entries, digest)
	for i, d := range c.order {
		if d == digest {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// read downloads the artifact and reads it, checking its size and digest.
func (c *Cache) read(ctx context.Context, url, digest string) (*configtree.Tree, error) {
	want, err := artifactdigest.Parse(digest)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading the artifact: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downloading the artifact: %s", resp.Status)
	}
	body := artifactdigest.NewReader(resp.Body, want, c.MaxBytes)
	t, err := configtree.Read(body)
	if err != nil {
		return nil, err
	}
	if err := body.Verify(); err != nil {
		return nil, fmt.Errorf("downloading the artifact: %w", err)
	}
	return t, nil
}
