// Package lock is what the exporter keeps of each election lock and how it judges it: the
// compact, immutable records (Lease for every lock kind, Candidate for LeaseCandidates,
// Tombstone for a lock that went), the lock kinds table (kinds.go), the decoders from API
// objects (Project, ProjectAnnotationLock, ProjectCandidate), the observation every event
// passes through in order (Observation: first sight, holder changes, when the record was seen
// to change, the holder's clock skew, and the History of tenures), and the judgement
// (judgement.go: held, skewed, fresh) that the metrics, the status page and the alert rules
// share.
//
// It knows nothing of the API server: package informer lists and watches, and calls these
// functions from its stores.
package lock
