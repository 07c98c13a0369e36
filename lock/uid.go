package lock

import (
	"encoding/hex"
	"hash/fnv"

	"k8s.io/apimachinery/pkg/types"
)

// uid is a Lease UID in 16 bytes instead of a 36-character string (plus its header).
// The API server always assigns RFC 4122 UUIDs; anything else (hand-made objects in tests)
// is hashed, which keeps equality, the only thing the exporter asks of a UID.
type uid [16]byte

func parseUID(s types.UID) uid {
	var u uid
	// Group by group into u, without allocating: this runs for every watch event.
	if len(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' {
		ok := true
		for _, g := range [5][3]int{{0, 8, 0}, {9, 13, 4}, {14, 18, 6}, {19, 23, 8}, {24, 36, 10}} {
			if _, err := hex.Decode(u[g[2]:], []byte(s[g[0]:g[1]])); err != nil {
				ok = false
				break
			}
		}
		if ok {
			return u
		}
		u = uid{}
	}
	h := fnv.New128a()
	h.Write([]byte(s))
	copy(u[:], h.Sum(nil))
	return u
}

// String formats u as a UUID.
func (u uid) String() string {
	x := hex.EncodeToString(u[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}
