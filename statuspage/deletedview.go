package statuspage

import (
	"time"

	"github.com/lease-exporter/lease-exporter/statuspage/api"
)

// deletedRow is a lock deleted recently, formatted.
type deletedRow struct {
	api.Deleted
	URL, When, Ago, LastChange, Recreated string
}

// deletedRowOf formats d; Ago is before now.
func deletedRowOf(d api.Deleted, now time.Time) deletedRow {
	r := deletedRow{Deleted: d, URL: lockURL(d.Namespace, d.Name, d.Kind), When: stamp(d.DeletedAt), Ago: ago(d.DeletedAt, now)}
	if d.LastObservedChange != nil {
		r.LastChange = stamp(*d.LastObservedChange)
	}
	if d.RecreatedAt != nil {
		r.Recreated = stamp(*d.RecreatedAt)
	}
	return r
}
