package leaderrecord

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// FuzzParseLeaderRecord checks that any input gives a record within the documented bounds,
// and agrees with encoding/json on what is well-formed JSON and on the holder.
// go test -run '^$' -fuzz FuzzParseLeaderRecord -fuzztime 1m -parallel 1 ./informer/
func FuzzParseLeaderRecord(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `{"holderIdentity":"a"} x`,
		`{"holderIdentity":"node-a_0f1e","leaseDurationSeconds":15,"acquireTime":"2026-11-23T05:15:06Z","renewTime":"2026-11-23T05:16:01Z","leaderTransitions":3,"strategy":"","preferredHolder":""}`,
		`{"holderIdentity": "py-1", "leaseDurationSeconds": "15", "acquireTime": "2026-11-23 05:15:06.715991", "renewTime": "2026-11-23 05:15:06"}`,
		`{"holderIdentity":"a\u00e9\ud83d\ude00\ud800","leaseDurationSeconds":1.5e1,"leaderTransitions":NaN,"x":[{"y":-0.0}]}`,
		"{\"holderIdentity\":\"\xff\",\"renewTime\":\"2026-11-23T07:16:01.123456789+02:00\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ps := Parse(s)
		checkRecordBounds(t, r)
		malformed := false
		for i, p := range ps {
			if !slices.Contains(Reasons, p.Reason) {
				t.Fatalf("unknown reason %q", p.Reason)
			}
			if p.Reason == ReasonMalformedJSON {
				if malformed = true; i != len(ps)-1 {
					t.Fatalf("malformed_json is not the last problem: %v", ps)
				}
			}
		}
		trimmed := strings.TrimLeft(s, " \t\r\n")
		shallow := strings.Count(s, "[")+strings.Count(s, "{") < maxDepth
		if json.Valid([]byte(s)) && strings.HasPrefix(trimmed, "{") && shallow && malformed {
			t.Fatalf("encoding/json accepts %q, the parser says malformed", s)
		}
		pythonOnly := strings.Contains(s, "NaN") || strings.Contains(s, "Infinity")
		if !malformed && s != "" && !json.Valid([]byte(s)) && !pythonOnly {
			t.Fatalf("encoding/json rejects %q, the parser accepts it", s)
		}
		var std struct {
			HolderIdentity string `json:"holderIdentity"`
		}
		if len(ps) == 0 && s != "" && json.Unmarshal([]byte(s), &std) == nil && std.HolderIdentity != r.Holder {
			t.Fatalf("holder %q, encoding/json reads %q", r.Holder, std.HolderIdentity)
		}
	})
}

func checkRecordBounds(t *testing.T, r Record) {
	t.Helper()
	if !utf8.ValidString(r.Holder) || len(r.Holder) > maxHolderBytes {
		t.Fatalf("holder %q out of bounds", r.Holder)
	}
	if r.HasDuration != (r.DurationSeconds > 0) || r.Transitions < 0 || !r.HasTransitions && r.Transitions != 0 {
		t.Fatalf("duration/transitions out of bounds: %+v", r)
	}
	for _, tm := range []struct {
		us  int64
		has bool
	}{{r.AcquireTime, r.HasAcquireTime}, {r.RenewTime, r.HasRenewTime}} {
		if tm.has && (tm.us < 0 || tm.us >= maxRecordTime) || !tm.has && tm.us != 0 {
			t.Fatalf("time out of bounds: %+v", r)
		}
	}
}

// FuzzLeaderRecordRoundTrip writes records the way both electors write them and reads them
// back: client-go's LeaderElectionRecord through encoding/json (what its ConfigMap and
// Endpoints locks stored), and the Python client's dict (strings for everything).
func FuzzLeaderRecordRoundTrip(f *testing.F) {
	f.Add("node-a_0f1e", int64(15), int64(1795410906715991), int64(1795410961000000), int64(3))
	f.Add("", int64(1), int64(0), int64(-1), int64(0))
	f.Add("é\xff", int64(-5), int64(253402300799999999), int64(1), int64(math.MaxInt32+1))
	f.Fuzz(func(t *testing.T, holder string, dur, acquire, renew, transitions int64) {
		acquireT, renewT := time.UnixMicro(acquire).UTC(), time.UnixMicro(renew).UTC()
		goodHolder := utf8.ValidString(holder) && len(holder) <= maxHolderBytes
		goodDur := dur >= 1 && dur <= math.MaxInt32
		inRange := func(us int64) bool { return us >= 0 && us < maxRecordTime }

		cg, err := json.Marshal(resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: int(dur),
			AcquireTime: metav1.NewTime(acquireT), RenewTime: metav1.NewTime(renewT), LeaderTransitions: int(transitions)})
		if err != nil {
			t.Skip("metav1.Time cannot marshal years beyond 9999")
		}
		r, ps := Parse(string(cg))
		checkRecordBounds(t, r)
		sec := func(us int64) int64 { return time.UnixMicro(us).Unix() * 1e6 }
		if goodHolder && r.Holder != holder || goodDur && r.DurationSeconds != int32(dur) ||
			inRange(sec(acquire)) && acquire != 0 && r.AcquireTime != sec(acquire) ||
			inRange(sec(renew)) && renew != 0 && r.RenewTime != sec(renew) ||
			transitions >= 0 && transitions <= math.MaxInt32 && r.Transitions != int32(transitions) {
			t.Fatalf("client-go record %s read as %+v, %v", cg, r, ps)
		}

		py, _ := json.Marshal(map[string]string{"holderIdentity": holder, "leaseDurationSeconds": pyStr(dur),
			"acquireTime": pyDatetime(acquireT), "renewTime": pyDatetime(renewT)})
		r, ps = Parse(string(py))
		checkRecordBounds(t, r)
		if goodHolder && r.Holder != holder || goodDur && r.DurationSeconds != int32(dur) ||
			inRange(acquire) && r.AcquireTime != acquire || inRange(renew) && r.RenewTime != renew || r.HasTransitions {
			t.Fatalf("python record %s read as %+v, %v", py, r, ps)
		}
	})
}

// pyStr is Python's str(int).
func pyStr(n int64) string { b, _ := json.Marshal(n); return string(b) }

// pyDatetime is Python's str(datetime) of a naive datetime: no fraction when it is zero.
func pyDatetime(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("2006-01-02 15:04:05.000000")
}
