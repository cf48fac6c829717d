package benchtable

// Figures are the rows `make bench` prints, in order: what the issues ask to be measured, each with the anchor
// measured beside it in the same run or the target it is held to.
var Figures = []Figure{
	// Catalog (catalog/bench_test.go, catalog/bundledirs_bench_test.go): beside operator-registry in the same run.
	{Bench: "BenchmarkLoadIndex10k", Metric: "alm-ms/op", Title: "Catalog load + index, 10,000 bundles (ms)",
		Anchor: "olm-ms/op", AnchorTitle: "operator-registry declcfg LoadFS + ConvertToModel, same run"},
	{Bench: "BenchmarkLoadIndex10k", Metric: "alm-heap-MB", Title: "Catalog heap kept, 10,000 bundles (MB)",
		Anchor: "olm-heap-MB", AnchorTitle: "operator-registry model, same run"},
	{Bench: "BenchmarkResolve10k", Metric: "ns/op", Title: "Resolve one upgrade in the 10,000-bundle index (ns/call)", Format: "%.0f"},
	{Bench: "BenchmarkBundleDirs", Metric: "alm-render-wall-ms", Title: "almctl catalog render of bundle directories (ms)",
		Anchor: "opm-render-wall-ms", AnchorTitle: "opm render, same run"},
	{Bench: "BenchmarkBundleDirs", Metric: "alm-render-peak-RSS-MiB", Title: "almctl catalog render peak RSS (MiB)",
		Anchor: "opm-render-peak-RSS-MiB", AnchorTitle: "opm render, same run"},
	{Bench: "BenchmarkBundleDirs", Metric: "alm-load-wall-ms", Title: "CatalogSource load of the same directories (ms)"},

	// The story with real processes (test/e2e/bench_test.go).
	{Bench: "BenchmarkStory", Metric: "s-apptype-to-succeeded", Title: "AppType declared → OperatorVersion Succeeded (s, real processes)", Format: "%.1f"},
	{Bench: "BenchmarkStory", Metric: "s-publish-to-old-deleted", Title: "New version published → old version deleted (s, real processes)", Format: "%.1f"},

	// The Konnect operator (controllers/konnect/bench_test.go).
	{Bench: "BenchmarkSync/list", Metric: "s-to-programmed", Title: "Konnect: 2,000 creates at 20 ms latency → all Programmed (s)",
		Format: "%.1f", Max: Limit(15)},
	{Bench: "BenchmarkSync/list", Metric: "calls/period-steady", Title: "Konnect: calls per sync period, 2,000 entities, no drift"},
}
