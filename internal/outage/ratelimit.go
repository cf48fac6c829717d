package outage

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MaxFailureBackoff caps how long a reconcile that failed waits before it is retried.
//
// controller-runtime's default rate limiter doubles an object's wait from 5ms with every failure in a row, up to
// 1000s. While the API server is away every request fails at once (connection refused), so an object that is being
// reconciled then — an install waiting for its Deployments is requeued every 10s — collects a dozen failures in a
// few seconds and is next retried 20s, 40s, 80s later, long after the server answers again. Capped at 10s, a failed
// reconcile is retried at least as often as a waiting one is polled; the overall bucket (10/s, burst 100, as
// controller-runtime's default) still limits how many retries a flood of failures makes.
const MaxFailureBackoff = 10 * time.Second

// RateLimiter is a controller's rate limiter of failed reconciles (controller.Options.RateLimiter): per object,
// 5ms doubling up to MaxFailureBackoff; overall, 10 retries a second with a burst of 100.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxFailureBackoff),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// Controller is the controller.Options of a loop that uses RateLimiter; everything else is the manager's default.
func Controller() controller.Options {
	return controller.Options{RateLimiter: RateLimiter()}
}
