package informer

import (
	"encoding/hex"
	"hash/fnv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// uid is a Lease UID in 16 bytes instead of a 36-character string (plus its header).
// The API server always assigns RFC 4122 UUIDs; anything else (hand-made objects in tests)
// is hashed, which keeps equality, the only thing the exporter asks of a UID.
type uid [16]byte

func parseUID(s types.UID) uid {
	var u uid
	if b, err := hex.DecodeString(strings.ReplaceAll(string(s), "-", "")); err == nil && len(b) == 16 && len(s) == 36 {
		copy(u[:], b)
		return u
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
