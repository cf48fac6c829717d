package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/almproject/alm/test/localenv"
)

// BenchmarkStory times what a user waits for, with every part a real process: ALM from config/default and the
// Konnect operator from bundles/, both running as pods from their images on the real node.
//   - s-apptype-to-succeeded: the AppType is declared (its bundle already published) until its OperatorVersion
//     has Succeeded (the operator's Deployment available).
//   - s-publish-to-old-deleted: almctl publish of the version that replaces it until the new version has
//     Succeeded and the old one is deleted.
//
// Each iteration starts a fresh local environment, which is not timed.
func BenchmarkStory(b *testing.B) {
	bundles := filepath.Join(root, "bundles", localenv.Package)
	var install, upgrade time.Duration
	for range b.N {
		b.StopTimer()
		ctx, _, story := start(b)
		must(b, story.CreateCatalog(ctx))
		_, err := story.Publish(ctx, filepath.Join(bundles, "1.0.0"))
		must(b, err)
		b.StartTimer()

		begin := time.Now()
		must(b, story.DeclareAppType(ctx, ns, localenv.Package))
		_, err = story.WaitInstalled(ctx, ns, localenv.Package, "1.0.0")
		must(b, err)
		install += time.Since(begin)

		begin = time.Now()
		_, err = story.Publish(ctx, filepath.Join(bundles, "1.1.0"))
		must(b, err)
		_, err = story.WaitInstalled(ctx, ns, localenv.Package, "1.1.0")
		must(b, err)
		upgrade += time.Since(begin)
	}
	b.ReportMetric(install.Seconds()/float64(b.N), "s-apptype-to-succeeded")
	b.ReportMetric(upgrade.Seconds()/float64(b.N), "s-publish-to-old-deleted")
}
