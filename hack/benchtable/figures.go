package benchtable

// Figures are the rows `make bench` prints, in order: what the issues ask to be measured, each with the anchor
// measured beside it in the same run or the target it is held to.
var Figures = []Figure{
	// Catalog (catalog/index/bench_test.go): beside operator-registry's library in the same process, labelled as the
	// reconstruction it is; bundle directories (catalog/index/bundledirs_bench_test.go): almctl beside bin/opm, each
	// a process, in the same rounds.
	{Bench: "BenchmarkLoadIndex10k", Metric: "alm-ms/op", Title: "Catalog load + index, 10,000 bundles (ms)",
		Anchor: "olm-ms/op", AnchorTitle: "operator-registry's library in the same process (declcfg LoadFS + ConvertToModel; a reconstruction, not opm), same run"},
	{Bench: "BenchmarkLoadIndex10k", Metric: "alm-heap-MB", Title: "Catalog heap kept, 10,000 bundles (MB)",
		Anchor: "olm-heap-MB", AnchorTitle: "operator-registry's model in the same process (a reconstruction, not opm), same run"},
	{Bench: "BenchmarkResolve10k", Metric: "ns/op", Title: "Resolve one upgrade in the 10,000-bundle index (ns/call)", Format: "%.0f"},
	{Bench: "BenchmarkBundleDirs", Metric: "alm-render-wall-ms", Title: "almctl catalog render of bundle directories (ms)",
		Anchor: "opm-render-wall-ms", AnchorTitle: "bin/opm render (v1.64.0, a process), same run"},
	{Bench: "BenchmarkBundleDirs", Metric: "alm-render-peak-RSS-MiB", Title: "almctl catalog render peak RSS (MiB)",
		Anchor: "opm-render-peak-RSS-MiB", AnchorTitle: "bin/opm render (v1.64.0, a process), same run"},
	{Bench: "BenchmarkBundleDirs", Metric: "alm-render-cpu-ms", Title: "almctl catalog render CPU, user + system (ms)",
		Anchor: "opm-render-cpu-ms", AnchorTitle: "bin/opm render (v1.64.0, a process), same run"},
	{Bench: "BenchmarkBundleDirs", Metric: "alm-load-wall-ms", Title: "CatalogSource load of the same directories (ms)"},

	// Catalog images (controllers/catalogsource/bench_test.go): a 10,000-bundle File-Based Catalog image on a
	// loopback registry, polled to serving by the CatalogSource loop's code in a process of its own, beside
	// `opm render --use-http` of the same image in the same rounds; and the poll of an unchanged image.
	{Bench: "BenchmarkCatalogImage10k", Metric: "alm-wall-ms", Title: "Catalog image, 10,000 bundles: poll → serving, process wall (ms)",
		Anchor: "opm-wall-ms", AnchorTitle: "bin/opm render --use-http (v1.64.0, a process), same run"},
	{Bench: "BenchmarkCatalogImage10k", Metric: "alm-peak-RSS-MiB", Title: "Catalog image, 10,000 bundles: peak RSS (MiB)",
		Anchor: "opm-peak-RSS-MiB", AnchorTitle: "bin/opm render --use-http (v1.64.0, a process), same run"},
	{Bench: "BenchmarkCatalogImage10k", Metric: "alm-cpu-ms", Title: "Catalog image, 10,000 bundles: CPU, user + system (ms)",
		Anchor: "opm-cpu-ms", AnchorTitle: "bin/opm render --use-http (v1.64.0, a process), same run"},
	{Bench: "BenchmarkCatalogImage10k", Metric: "alm-serving-ms", Title: "Catalog image, 10,000 bundles: poll → serving inside the running loop (ms)"},
	{Bench: "BenchmarkCatalogImage10k", Metric: "catalog-MiB", Title: "Catalog image: FBC JSON as opm writes it (MiB)", Format: "%.1f"},
	{Bench: "BenchmarkCatalogImage10k", Metric: "layer-MiB", Title: "Catalog image: its one layer, compressed (MiB)", Format: "%.1f"},
	{Bench: "BenchmarkCatalogImageUnchangedPoll", Metric: "requests/poll", Title: "Catalog image: registry requests per unchanged poll",
		Format: "%.2f", Max: Limit(1)},
	{Bench: "BenchmarkCatalogImageUnchangedPoll", Metric: "blob-requests/poll", Title: "Catalog image: blob requests per unchanged poll",
		Format: "%.2f", Max: Limit(0)},
	{Bench: "BenchmarkCatalogImageUnchangedPoll", Metric: "bytes/poll", Title: "Catalog image: bytes received per unchanged poll (status line, headers, body)"},
	{Bench: "BenchmarkCatalogImageUnchangedPoll", Metric: "ns/op", Title: "Catalog image: unchanged poll, the loop's work incl. status summary (ns)"},

	// The local node (test/localnode/bench_test.go): a cluster, its one node, a pod pulled through the mirror.
	{Bench: "BenchmarkNode", Metric: "s-to-pod-available", Title: "Node: start → Ready with a pod Available (s)", Format: "%.1f"},
	{Bench: "BenchmarkNode", Metric: "kubelet-RSS-MB", Title: "Node: kubelet RSS, idle (MB)", Format: "%.0f"},
	{Bench: "BenchmarkNode", Metric: "containerd-RSS-MB", Title: "Node: containerd RSS, idle (MB)", Format: "%.0f"},
	{Bench: "BenchmarkNode", Metric: "kube-proxy-RSS-MB", Title: "Node: kube-proxy RSS, idle (MB)", Format: "%.0f"},

	// The story on the real node (test/e2e/bench_test.go).
	{Bench: "BenchmarkStory", Metric: "s-apptype-to-succeeded", Title: "AppType declared → OperatorVersion Succeeded (s, real node)", Format: "%.1f"},
	{Bench: "BenchmarkStory", Metric: "s-publish-to-old-deleted", Title: "New version published → old version deleted (s, real node)", Format: "%.1f"},

	// ALM at scale (test/scale): 1,000 AppTypes in 100 namespaces (and 10,000 in 1,000) from a 50-package catalog of
	// 7-object bundles, ALM a real process; requests counted by the API server's audit log of ALM's user. What the
	// requests (req-*/install) and the resident megabytes at the end (mem-*-MB) are for follow as the benchmark's
	// other metrics.
	{Bench: "BenchmarkScale", Metric: "succeeded", Title: "Scale: OperatorVersions Succeeded (of 1,000)", Min: Limit(1000)},
	{Bench: "BenchmarkScale", Metric: "rss-MB", Title: "Scale: ALM peak RSS (MB)", Max: Limit(100)},
	{Bench: "BenchmarkScale", Metric: "rss-runs", Title: "Scale: runs of the 1,000 installs (the peak RSS above is the highest of them)"},
	{Bench: "BenchmarkScale", Metric: "rss-MB-median", Title: "Scale: ALM peak RSS, median of the runs (MB)"},
	{Bench: "BenchmarkScale", Metric: "rss-MB-lowest", Title: "Scale: ALM peak RSS, lowest of the runs (MB)"},
	{Bench: "BenchmarkScale", Metric: "heap-MB", Title: "Scale: ALM peak heap (MB)"},
	{Bench: "BenchmarkScale", Metric: "install-requests/install", Title: "Scale: API requests per install, 7-object bundle (what installs cost: one-off start-up requests left out)", Format: "%.2f", Max: Limit(12)},
	{Bench: "BenchmarkScale", Metric: "requests/install", Title: "Scale: all of ALM's API requests / installs (start-up included)", Format: "%.2f"},
	{Bench: "BenchmarkScale", Metric: "requests-no-events/install", Title: "Scale: API requests per install, Events left out", Format: "%.1f"},
	{Bench: "BenchmarkScale", Metric: "reconciles/install", Title: "Scale: reconciles per install", Format: "%.1f"},
	{Bench: "BenchmarkScale", Metric: "s-after-available", Title: "Scale: all Succeeded after the last Deployment available (s)", Format: "%.1f", Max: Limit(30)},
	{Bench: "BenchmarkScale", Metric: "upgraded", Title: "Scale: upgrades Succeeded (of 1,000; one publish of 2.0.0 replacing 1.0.0)", Min: Limit(1000)},
	{Bench: "BenchmarkScale", Metric: "s-upgraded", Title: "Scale: all upgraded after publish (s; last old version deleted)", Format: "%.1f", Max: Limit(60)},
	{Bench: "BenchmarkScale", Metric: "upgrade-cpu-floor-s", Title: "Scale: the upgrades' CPU time, every process of the run, over this machine's cores (s; the floor of the row above here)", Format: "%.1f"},
	{Bench: "BenchmarkScale", Metric: "upgrade-apiserver-cpu-ms/request", Title: "Scale: kube-apiserver CPU per request of ALM during the upgrades (ms)", Format: "%.2f"},
	{Bench: "BenchmarkScale", Metric: "requests/upgrade", Title: "Scale: API requests per upgrade (7-object bundle)", Format: "%.2f", Max: Limit(14)},
	{Bench: "BenchmarkScale", Metric: "upgrade-req-objects/upgrade", Title: "Scale: of those, the bundles' objects created, updated or handed over (their deletes are upgrade-req-other)", Format: "%.2f"},
	{Bench: "BenchmarkScale", Metric: "recreated", Title: "Scale: objects re-created during upgrades (same name, new UID)", Max: Limit(0)},
	{Bench: "BenchmarkScale", Metric: "upgrade-rss-MB", Title: "Scale: ALM peak RSS during upgrades (MB)", Max: Limit(100)},
	{Bench: "BenchmarkScaleWaves", Metric: "s-upgraded", Title: "Scale, in waves (canary 1, then 25%, then the rest; no soak): all upgraded after publish (s)", Format: "%.1f"},
	{Bench: "BenchmarkScaleWaves", Metric: "requests/upgrade", Title: "Scale, in waves: API requests per upgrade", Format: "%.2f"},
	{Bench: "BenchmarkScaleGOGC15", Metric: "upgrade-rss-MB", Title: "Scale, ALM at GOGC=15 (its default: 30): peak RSS during upgrades (MB)"},
	{Bench: "BenchmarkScaleGOGC15", Metric: "upgrade-cpu-s-alm", Title: "Scale, ALM at GOGC=15: ALM's CPU during the upgrades (s)", Format: "%.1f"},
	{Bench: "BenchmarkScaleGOGC15", Metric: "s-upgraded", Title: "Scale, ALM at GOGC=15: all upgraded after publish (s)", Format: "%.1f"},
	{Bench: "BenchmarkScale10k", Metric: "succeeded", Title: "Scale 10k: OperatorVersions Succeeded (of 10,000 in 1,000 namespaces)", Min: Limit(10000)},
	{Bench: "BenchmarkScale10k", Metric: "rss-MB", Title: "Scale 10k: ALM peak RSS (MB; goal ≤ 300)", Max: Limit(300)},
	{Bench: "BenchmarkScale10k", Metric: "heap-MB", Title: "Scale 10k: ALM peak heap (MB)"},
	{Bench: "BenchmarkScale10k", Metric: "requests/install", Title: "Scale 10k: API requests per install", Format: "%.2f"},

	// The Konnect operator (controllers/konnect/bench_test.go).
	{Bench: "BenchmarkSync/list", Metric: "s-to-programmed", Title: "Konnect: 2,000 creates at 20 ms latency → all Programmed (s)",
		Format: "%.1f", Max: Limit(15)},
	{Bench: "BenchmarkSync/list", Metric: "calls/period-steady", Title: "Konnect: calls per sync period, 2,000 entities, no drift"},
	{Bench: "BenchmarkSync/list", Metric: "calls/period-1%drift", Title: "Konnect: calls per sync period, 2,000 entities, 1% edited in Konnect"},
	{Bench: "BenchmarkKonnectScale", Metric: "rss-MB", Title: "Konnect: operator peak RSS, 10,000 entities (MB)", Max: Limit(300)},
	{Bench: "BenchmarkKonnectScale", Metric: "calls/period-steady", Title: "Konnect: calls per sync period, 10,000 entities, no drift", Max: Limit(50)},
	{Bench: "BenchmarkKonnectScale", Metric: "s-to-programmed", Title: "Konnect: 10,000 creates → all Programmed (s)", Format: "%.0f"},
	{Bench: "BenchmarkKonnectScale", Metric: "calls/entity-at-create", Title: "Konnect: calls per entity at creation, 10,000 entities", Format: "%.2f"},
	{Bench: "BenchmarkKonnectBudget", Metric: "429s", Title: "Konnect: 429 answers, 10,000 entities of every kind under 3,000 requests/min", Max: Limit(0)},
	{Bench: "BenchmarkKonnectBudget", Metric: "s-to-programmed", Title: "Konnect: 10,000 entities under 3,000 requests/min → all Programmed (s)", Format: "%.0f"},
	{Bench: "BenchmarkKonnectBudget", Metric: "floor-s", Title: "Konnect: the floor 3,000 requests/min allows for those requests (s)", Format: "%.0f"},
	{Bench: "BenchmarkKonnectBudget", Metric: "requests/entity", Title: "Konnect: requests per entity under the budget", Format: "%.2f"},
	{Bench: "BenchmarkKonnectSteadyAllKinds", Metric: "calls/period-steady", Title: "Konnect: calls per sync period, 2,000 entities of every kind (15 kinds, 2 control planes), no drift", Format: "%.1f"},
	{Bench: "BenchmarkKonnectSteadyAllKinds", Metric: "s-to-programmed", Title: "Konnect: 2,000 entities of every kind → all Programmed (s)", Format: "%.0f"},
}
