package leaderrecord

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func us(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMicro()
}

func problems(fr ...string) []Problem {
	var ps []Problem
	for i := 0; i < len(fr); i += 2 {
		ps = append(ps, Problem{Field: fr[i], Reason: Reason(fr[i+1])})
	}
	return ps
}

func TestParseLeaderRecord(t *testing.T) {
	const t1, t2 = "2026-11-23T05:15:06Z", "2026-11-23T05:16:01Z"
	cgo := Record{Holder: "node-a_0f1e", DurationSeconds: 15, Transitions: 3, AcquireTime: us(t1), RenewTime: us(t2),
		HasDuration: true, HasAcquireTime: true, HasRenewTime: true, HasTransitions: true}
	py := Record{Holder: "py-1", DurationSeconds: 15, AcquireTime: us("2026-11-23T05:15:06.715991Z"), RenewTime: us("2026-11-23T05:15:06.715991Z"),
		HasDuration: true, HasAcquireTime: true, HasRenewTime: true}
	with := func(r Record, f func(*Record)) Record { f(&r); return r }
	for _, tc := range []struct {
		name, in string
		want     Record
		problems []Problem
	}{
		{"empty: nobody held it yet", ``, Record{}, nil},
		{"client-go record", `{"holderIdentity":"node-a_0f1e","leaseDurationSeconds":15,"acquireTime":"2026-11-23T05:15:06Z","renewTime":"2026-11-23T05:16:01Z","leaderTransitions":3,"strategy":"","preferredHolder":""}`, cgo, nil},
		{"client-go release: zero times marshal as null", `{"holderIdentity":"","leaseDurationSeconds":1,"acquireTime":null,"renewTime":null,"leaderTransitions":3}`,
			Record{DurationSeconds: 1, Transitions: 3, HasDuration: true, HasTransitions: true}, nil},
		{"python record", `{"holderIdentity": "py-1", "leaseDurationSeconds": "15", "acquireTime": "2026-11-23 05:15:06.715991", "renewTime": "2026-11-23 05:15:06.715991"}`, py, nil},
		{"python time without fraction", `{"holderIdentity": "py-1", "leaseDurationSeconds": "15", "acquireTime": "2026-11-23 05:15:06", "renewTime": "2026-11-23 05:15:06.000001"}`,
			with(py, func(r *Record) { r.AcquireTime, r.RenewTime = us(t1), us(t1)+1 }), nil},
		{"python float duration and aware datetime", `{"holderIdentity":"py-1","leaseDurationSeconds":"15.0","acquireTime":"2026-11-23 07:15:06.715991+02:00","renewTime":"2026-11-23T05:15:06.715991"}`, py, nil},
		{"RFC 3339 with offset and nanoseconds (truncated to µs)", `{"renewTime":"2026-11-23T07:16:01.123456789+02:00"}`,
			Record{RenewTime: us(t2) + 123456, HasRenewTime: true}, nil},
		{"whitespace, unknown nested fields, escapes", " {\n\t\"x\" : {\"a\":[1,-2.5e3,{\"b\":null},true,false,\"\\\"\"]}, \"holderIdentity\" : \"a\\u00e9\\ud83d\\ude00\\/\\n\" } ",
			Record{Holder: "aé😀/\n"}, nil},
		{"keys match case-insensitively, the last duplicate wins", `{"HolderIdentity":"a","holderidentity":"b","leaseDurationSeconds":"x","leaseDurationSeconds":15}`,
			Record{Holder: "b", DurationSeconds: 15, HasDuration: true}, problems(fieldDuration, "bad_duration")},
		{"a bad duplicate clears the field", `{"leaseDurationSeconds":15,"leaseDurationSeconds":-15}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"null fields are absent", `{"holderIdentity":null,"leaseDurationSeconds":null,"leaderTransitions":null,"renewTime":"","acquireTime":null}`, Record{}, nil},

		{"truncated: what came before is kept", `{"holderIdentity":"a","leaseDurationSeconds":15,"acq`,
			Record{Holder: "a", DurationSeconds: 15, HasDuration: true}, problems("", "malformed_json")},
		{"trailing garbage", `{"holderIdentity":"a"} x`, Record{Holder: "a"}, problems("", "malformed_json")},
		{"trailing comma", `{"holderIdentity":"a",}`, Record{Holder: "a"}, problems("", "malformed_json")},
		{"not an object", `["holderIdentity","a"]`, Record{}, problems("", "malformed_json")},
		{"null", `null`, Record{}, problems("", "malformed_json")},
		{"only whitespace", ` `, Record{}, problems("", "malformed_json")},
		{"raw control character", "{\"holderIdentity\":\"a\tb\"}", Record{}, problems("", "malformed_json")},
		{"bad escape", `{"holderIdentity":"a\x"}`, Record{}, problems("", "malformed_json")},
		{"nesting too deep", `{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, Record{}, problems("", "malformed_json")},
		{"nesting at the bound", `{"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `,"holderIdentity":"a"}`, Record{Holder: "a"}, nil},
		{"nesting one beyond the bound", `{"holderIdentity":"a","x":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`,
			Record{Holder: "a"}, problems("", "malformed_json")},
		{"trailing newline", "{\"holderIdentity\":\"a\"}\n", Record{Holder: "a"}, nil},
		{"a second object", `{"holderIdentity":"a"}{}`, Record{Holder: "a"}, problems("", "malformed_json")},
		{"missing comma", `{"holderIdentity":"a" "leaseDurationSeconds":15}`, Record{Holder: "a"}, problems("", "malformed_json")},
		{"leading zero: 0, then garbage", `{"leaseDurationSeconds":015}`, Record{}, problems(fieldDuration, "bad_duration", "", "malformed_json")},

		{"holder not a string", `{"holderIdentity":5,"leaseDurationSeconds":15}`, Record{DurationSeconds: 15, HasDuration: true}, problems(fieldHolder, "bad_holder")},
		{"holder invalid UTF-8", "{\"holderIdentity\":\"a\xffb\"}", Record{Holder: "a\uFFFDb"}, problems(fieldHolder, "bad_holder")},
		{"holder invalid UTF-8: a U+FFFD per byte, as encoding/json", "{\"holderIdentity\":\"a\xff\xfeb\"}", Record{Holder: "a\uFFFD\uFFFDb"}, problems(fieldHolder, "bad_holder")},
		{"holder lone surrogate", `{"holderIdentity":"a\ud800b"}`, Record{Holder: "a\uFFFDb"}, problems(fieldHolder, "bad_holder")},
		{"holder high surrogate before another escape", `{"holderIdentity":"a\ud800\u0041"}`, Record{Holder: "a\uFFFDA"}, problems(fieldHolder, "bad_holder")},
		{"holder lone low surrogate", `{"holderIdentity":"a\udc00"}`, Record{Holder: "a\uFFFD"}, problems(fieldHolder, "bad_holder")},
		{"holder U+FFFD is valid, written or escaped", "{\"holderIdentity\":\"\\ufffd\uFFFD\"}", Record{Holder: "\uFFFD\uFFFD"}, nil},
		{"holder escaped backslash before ud800 is text", `{"holderIdentity":"a\\ud800"}`, Record{Holder: `a\ud800`}, nil},
		{"holder of 10 KB is truncated on a rune boundary", `{"holderIdentity":"` + "a" + strings.Repeat("é", 5000) + `"}`,
			Record{Holder: "a" + strings.Repeat("é", (maxHolderBytes-1)/2)}, problems(fieldHolder, "bad_holder")},

		{"duration zero", `{"leaseDurationSeconds":0}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration negative string", `{"leaseDurationSeconds":"-15"}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration beyond int32", `{"leaseDurationSeconds":1e12}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration fractional", `{"leaseDurationSeconds":15.5}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration Python NaN token", `{"leaseDurationSeconds":NaN,"leaderTransitions":-Infinity}`, Record{},
			problems(fieldDuration, "bad_duration", fieldTransitions, "bad_transitions")},
		{"Python's constants elsewhere: in strings they are text, in unknown fields skipped", `{"holderIdentity":"NaN","x":[NaN,Infinity,{"y":-Infinity}],"leaseDurationSeconds":3}`,
			Record{Holder: "NaN", DurationSeconds: 3, HasDuration: true}, nil},
		{"Python's constants are one token", `{"holderIdentity":"a","leaseDurationSeconds":-NaN}`, Record{Holder: "a"}, problems("", "malformed_json")},
		{"duration nan string (Config accepts float('nan'))", `{"leaseDurationSeconds":"nan"}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration hex, spaces, bool, object", `{"leaseDurationSeconds":"0x10"}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration with spaces", `{"leaseDurationSeconds":" 15"}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration bool", `{"leaseDurationSeconds":true}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration object", `{"leaseDurationSeconds":{"s":15}}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration 1.5e1 is 15", `{"leaseDurationSeconds":1.5e1}`, Record{DurationSeconds: 15, HasDuration: true}, nil},
		{"exponents as numbers and as strings", `{"leaseDurationSeconds":1E+3,"leaderTransitions":"1e3"}`,
			Record{DurationSeconds: 1000, Transitions: 1000, HasDuration: true, HasTransitions: true}, nil},
		{"duration of 30 digits", `{"leaseDurationSeconds":123456789012345678901234567890}`, Record{}, problems(fieldDuration, "bad_duration")},
		{"duration beyond float64", `{"leaseDurationSeconds":1e999}`, Record{}, problems(fieldDuration, "bad_duration")},

		{"time year 0001 (Go zero time)", `{"renewTime":"0001-01-01T00:00:00Z"}`, Record{}, problems(fieldRenew, "bad_time")},
		{"time year 9999", `{"acquireTime":"9999-12-31 23:59:59.999999"}`, Record{}, problems(fieldAcquire, "bad_time")},
		{"time February 30", `{"renewTime":"2026-02-30 00:00:00"}`, Record{}, problems(fieldRenew, "bad_time")},
		{"time not a time", `{"renewTime":"yesterday","acquireTime":1795410906}`, Record{},
			problems(fieldRenew, "bad_time", fieldAcquire, "bad_time")},
		{"time bad zone", `{"renewTime":"2026-11-23T05:15:06 UTC"}`, Record{}, problems(fieldRenew, "bad_time")},
		{"time empty fraction", `{"renewTime":"2026-11-23T05:15:06.Z"}`, Record{}, problems(fieldRenew, "bad_time")},

		{"transitions negative", `{"leaderTransitions":-1}`, Record{}, problems(fieldTransitions, "bad_transitions")},
		{"transitions fractional string", `{"leaderTransitions":"1.5"}`, Record{}, problems(fieldTransitions, "bad_transitions")},
		{"transitions zero", `{"leaderTransitions":0}`, Record{HasTransitions: true}, nil},
		{"every field bad at once", `{"holderIdentity":[],"leaseDurationSeconds":-1,"acquireTime":"x","renewTime":"y","leaderTransitions":"z"}`, Record{},
			problems(fieldHolder, "bad_holder", fieldDuration, "bad_duration", fieldAcquire, "bad_time", fieldRenew, "bad_time", fieldTransitions, "bad_transitions")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ps := Parse(tc.in)
			if got != tc.want {
				t.Errorf("record\n got %+v\nwant %+v", got, tc.want)
			}
			if !slices.Equal(ps, tc.problems) {
				t.Errorf("problems: got %v, want %v", ps, tc.problems)
			}
		})
	}
}

func TestParseReasonsListsEveryReason(t *testing.T) {
	want := []Reason{"malformed_json", "bad_holder", "bad_duration", "bad_time", "bad_transitions"}
	if !slices.Equal(Reasons, want) {
		t.Errorf("Reasons = %v, want %v", Reasons, want)
	}
}

var update = flag.Bool("update", false, "rewrite testdata/leaderrecord/*.golden from the parser's output")

// Annotation values captured from real electors (internal/testenv/election, -capture) parse
// without problems into what testdata/leaderrecord/<source>.golden says.
func TestParseLeaderRecordCaptured(t *testing.T) {
	inputs, err := filepath.Glob("testdata/leaderrecord/*.txt")
	if err != nil || len(inputs) < 3 {
		t.Fatalf("captured samples: %v %v", inputs, err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			python := strings.HasPrefix(filepath.Base(in), "python")
			var out strings.Builder
			for line := range strings.Lines(string(b)) {
				line = strings.TrimSuffix(line, "\n")
				if strings.HasPrefix(line, "#") {
					continue
				}
				r, ps := Parse(line)
				if len(ps) > 0 || !r.HasDuration || !r.HasRenewTime || !r.HasAcquireTime || r.HasTransitions == python {
					t.Errorf("%s: %+v %v", line, r, ps)
				}
				fmt.Fprintf(&out, "holder=%q duration=%d acquire=%s renew=%s transitions=%d/%v\n", r.Holder, r.DurationSeconds,
					time.UnixMicro(r.AcquireTime).UTC().Format(time.RFC3339Nano), time.UnixMicro(r.RenewTime).UTC().Format(time.RFC3339Nano), r.Transitions, r.HasTransitions)
			}
			golden := strings.TrimSuffix(in, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if out.String() != string(want) {
				t.Errorf("parsed %s:\n%s\nwant:\n%s", in, out.String(), want)
			}
		})
	}
}
