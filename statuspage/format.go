package statuspage

import (
	"fmt"
	"math"
	"net/url"
	"time"

	"github.com/lease-exporter/lease-exporter/lock"
)

// Formatting shared by the pages and the JSON: times, durations, the pages' own URLs.

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000Z") }

func ago(t, now time.Time) string {
	return seconds(ptr(now.Sub(t).Seconds())) + " ago"
}

// seconds formats a duration in seconds the way an on-call engineer reads it; "" for null.
func seconds(s *float64) string {
	if s == nil {
		return ""
	}
	d := time.Duration(*s * float64(time.Second))
	switch abs := max(d, -d); {
	case abs < time.Minute:
		return fmt.Sprintf("%.1fs", math.Round(*s*10)/10+0) // +0: no "-0.0s"
	case abs < time.Hour:
		return d.Round(time.Second).String()
	default:
		return d.Round(time.Minute).String()
	}
}

func orInf(f *float64) float64 {
	if f == nil {
		return 1e18 // sorts last; a string "+Inf" would not parse in the script
	}
	return *f
}

// short writes 40s, 1m, 2m, 1h.
func short(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	default:
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
}

func timeOf(micros int64) *time.Time {
	t := time.UnixMicro(micros).UTC()
	return &t
}

func ptr[T any](v T) *T { return &v }

func lockURL(namespace, name, kind string) string {
	u := "/leases/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
	if kind != lock.DefaultKind.String() {
		u += "?kind=" + url.QueryEscape(kind)
	}
	return u
}

// withQuery sets key to value in the query of path, a path with an optional query.
func withQuery(path, key, value string) string {
	u, err := url.Parse(path)
	if err != nil {
		return path
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
