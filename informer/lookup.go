package informer

import "github.com/lease-exporter/lease-exporter/informer/lock"

// Lookup returns the lock of the kind cached as namespace/name, nil if there is none: a map
// lookup per store (one per watched kind and namespace scope), where a pass over the view
// would visit every lock. The status page's detail asks it, and Has.
func (l *Cache) Lookup(kind lock.Kind, namespace, name string) *lock.Lease {
	key := namespace + "/" + name // a Lease's StoreKey
	for _, s := range l.locks {
		if r, ok := s.get(key); ok && r.Kind() == kind {
			return r
		}
	}
	return nil
}

// Has reports whether a lock of the kind is cached as namespace/name. --expect asks it for
// each expected lock at every scrape.
func (l *Cache) Has(kind lock.Kind, namespace, name string) bool {
	return l.Lookup(kind, namespace, name) != nil
}

// get returns the record cached under key.
func (s *store[R]) get(key string) (R, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.records[key]
	return r, ok
}
