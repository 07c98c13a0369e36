// Package events gives the cluster a record of every leadership change the exporter sees: it
// writes events.k8s.io/v1 Events regarding each lock (--events), through client-go's event
// broadcaster, from one elected writer per shard, bounded by one token bucket; and on start
// it rebuilds each lock's recent history from the Events already written, so a restart or a
// second replica shows the same past (docs/events.md).
//
// The files follow an Event's life: change.go decides from two observations of a lock which
// Event it makes, note.go words it (and reads it back), writer.go sends it, elect.go decides
// which replica may, rebuild.go reads them back into history.
package events
