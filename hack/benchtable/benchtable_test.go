package benchtable

import (
	"bytes"
	"strings"
	"testing"
)

const sample = `goos: linux
pkg: github.com/almproject/alm/catalog/index
BenchmarkLoadIndex10k-2   	       3	 412345678 ns/op	       120.5 alm-ms/op	       410.0 olm-ms/op	        45.00 alm-heap-MB	       450.0 olm-heap-MB
BenchmarkResolve10k-2     	  300000	      3500 ns/op	      3400 cpu-ns/op	     120 B/op	       3 allocs/op
pkg: github.com/almproject/alm/controllers/konnect
BenchmarkSync/list-2      	       1	20000000000 ns/op	        17.50 s-to-programmed	         4.000 calls/period-steady	 2.1 calls/entity-at-create
ok  	github.com/almproject/alm/controllers/konnect	60.1s
`

func TestParse(t *testing.T) {
	results, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("%d results, want 3: %+v", len(results), results)
	}
	if r := results[2]; r.Name != "BenchmarkSync/list" || r.Package != "github.com/almproject/alm/controllers/konnect" || r.Metrics["s-to-programmed"] != 17.5 {
		t.Errorf("third result %+v", r)
	}
}

func TestWrite(t *testing.T) {
	results, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Write(&out, []Figure{
		{Bench: "BenchmarkLoadIndex10k", Metric: "alm-ms/op", Title: "load", Anchor: "olm-ms/op", AnchorTitle: "opm"},
		{Bench: "BenchmarkSync/list", Metric: "s-to-programmed", Title: "creates", Format: "%.1f", Max: Limit(15)},
		{Bench: "BenchmarkSync/list", Metric: "calls/period-steady", Title: "steady", Max: Limit(50)},
		{Bench: "BenchmarkScale", Metric: "rss-MB", Title: "scale RSS", Max: Limit(200)},
	}, results)
	got := out.String()
	for _, want := range []string{
		"| load | 120 | opm: 410 (ALM 0.29×) |  |",
		"| BenchmarkLoadIndex10k: alm-heap-MB | 45 | | |",
		"| creates | 17.5 | target ≤ 15.0 | missed |",
		"| steady | 4.00 | target ≤ 50 | met |",
		"| scale RSS | not run (BenchmarkScale rss-MB) | target ≤ 200 | |",
		"| BenchmarkSync/list: calls/entity-at-create | 2.10 | | |",
		"| BenchmarkResolve10k: cpu-ns/op | 3400 | | |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "B/op") || strings.Contains(got, "olm-ms/op") {
		t.Errorf("the table shows the testing package's own units or an anchor on a row of its own:\n%s", got)
	}
}

// A target of zero (blob requests per unchanged poll) is met by zero and missed by anything more.
func TestWriteZeroTarget(t *testing.T) {
	results, err := Parse(strings.NewReader("BenchmarkPoll-2   100   5000 ns/op   0 blob-requests/poll   1.000 requests/poll\n" +
		"BenchmarkPollBad-2   100   5000 ns/op   2.000 blob-requests/poll\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Write(&out, []Figure{
		{Bench: "BenchmarkPoll", Metric: "blob-requests/poll", Title: "blobs", Format: "%.2f", Max: Limit(0)},
		{Bench: "BenchmarkPollBad", Metric: "blob-requests/poll", Title: "blobs bad", Format: "%.2f", Max: Limit(0)},
	}, results)
	for _, want := range []string{"| blobs | 0.00 | target ≤ 0.00 | met |", "| blobs bad | 2.00 | target ≤ 0.00 | missed |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
