package election

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// skewedLock makes a client-go candidate behave as if its clock were off by skew.
// LeaderElectionConfig has no clock option (LeaderElector's clock field is unexported and
// NewLeaderElector sets the real clock), and a Go process ignores libfaketime. The elector
// judges expiry only by differences of its own clock (observedTime), so its clock shows only
// in the times it writes: acquireTime and renewTime. The lock shifts those by skew on the
// way out and back on the way in, so the elector still reads its own times.
type skewedLock struct {
	resourcelock.Interface
	skew time.Duration
}

func (l skewedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	r, raw, err := l.Interface.Get(ctx)
	if r != nil {
		shift(r, -l.skew)
	}
	return r, raw, err
}

func (l skewedLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	shift(&r, l.skew)
	return l.Interface.Create(ctx, r)
}

func (l skewedLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	shift(&r, l.skew)
	return l.Interface.Update(ctx, r)
}

// shift moves the record's set times; zero times (never set) stay zero.
func shift(r *resourcelock.LeaderElectionRecord, d time.Duration) {
	for _, t := range []*metav1.Time{&r.AcquireTime, &r.RenewTime} {
		if !t.IsZero() {
			*t = metav1.NewTime(t.Add(d))
		}
	}
}
