package leaderrecord

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkParseLeaderRecord is the parse of one annotation lock's renewal, over 1,000
// distinct records as 1,000 locks write them (the load issue 23 sizes the parser for: each
// renewing every 2 s, 500 parses/s). %core@500/s is the share of one core that load costs;
// the allocation rate is B/op × 500 (docs/benchmarks.md).
func BenchmarkParseLeaderRecord(b *testing.B) {
	const locks, perSecond = 1000, 500
	t0 := time.Date(2026, 11, 23, 9, 41, 32, 0, time.UTC)
	for _, elector := range []struct {
		name   string
		record func(i int, renew time.Time) string
	}{
		// client-go's LeaderElectionRecord through encoding/json: a pod name and a UUID.
		{"client-go", func(i int, renew time.Time) string {
			return fmt.Sprintf(`{"holderIdentity":"controller-manager-7d9f8b6c5-%05d_0b5e8a52-4c0e-4f7e-9a55-%012d",`+
				`"leaseDurationSeconds":15,"acquireTime":"%s","renewTime":"%s","leaderTransitions":%d,"strategy":"","preferredHolder":""}`,
				i, i, renew.Add(-time.Hour).Format(time.RFC3339), renew.Format(time.RFC3339), i%7)
		}},
		// The Python client's json.dumps of its dict: strings throughout, str(datetime).
		{"python", func(i int, renew time.Time) string {
			return fmt.Sprintf(`{"holderIdentity": "worker-%05d", "leaseDurationSeconds": "15", "acquireTime": "%s", "renewTime": "%s"}`,
				i, renew.Add(-time.Hour).Format("2006-01-02 15:04:05.000000"), renew.Format("2006-01-02 15:04:05.000000"))
		}},
	} {
		b.Run(elector.name, func(b *testing.B) {
			records := make([]string, locks)
			for i := range records {
				records[i] = elector.record(i, t0.Add(time.Duration(i)*2*time.Millisecond+time.Duration(i)*time.Microsecond))
			}
			if r, ps := Parse(records[1]); len(ps) > 0 || !r.HasRenewTime || r.Holder == "" {
				b.Fatalf("%s: %+v %v", records[1], r, ps)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				Parse(records[i%locks])
				i++
			}
			nsPerOp := float64(b.Elapsed().Nanoseconds()) / float64(i)
			b.ReportMetric(nsPerOp*perSecond/1e9*100, "%core@500/s")
		})
	}
}
