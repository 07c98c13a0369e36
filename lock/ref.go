package lock

// Ref is a lock's address: its kind, namespace and name. The kind is part of it because a
// ConfigMap lock and a Lease may share a namespace and a name. It is what --expect declares,
// what the Events tracker, the pages and kubectl lease key their maps by, and comparable, so
// it is a map key as it is.
type Ref struct {
	Kind            Kind
	Namespace, Name string
}

// String is namespace/name/resource, as --expect's errors and logs name a lock.
func (r Ref) String() string { return r.Namespace + "/" + r.Name + "/" + r.Kind.Resource() }

// Ref is l's address.
func (l *Lease) Ref() Ref { return Ref{l.Kind(), l.Namespace(), l.Name()} }
