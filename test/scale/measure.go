package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/almproject/alm/controllers/crdaccess"
)

// auditPolicy records every request of one user (ALM's) at the Metadata level, and nothing else.
func auditPolicy(user string) string {
	return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + user + `"]
- level: None
`
}

// ownObject marks the requests about ALM's own objects (one per cluster, whatever the installs) in Requests' keys.
const ownObject = "(ALM's own)"

// Requests counts API requests by "verb resource[/subresource]".
type Requests map[string]int

// Total is the number of requests.
func (r Requests) Total() int {
	n := 0
	for _, c := range r {
		n += c
	}
	return n
}

// PerInstall lists the counts divided by installs on one line, highest first; counts below one per install are
// summed as "other".
func (r Requests) PerInstall(installs int) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if r[keys[i]] != r[keys[j]] {
			return r[keys[i]] > r[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	other := 0
	for _, k := range keys {
		if r[k]*10 < installs {
			other += r[k]
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%.2f", k, float64(r[k])/float64(installs)))
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("other=%.2f", float64(other)/float64(installs)))
	}
	return strings.Join(parts, ", ")
}

// Events is the number of requests about Events.
func (r Requests) Events() int {
	n := 0
	for k, c := range r {
		if strings.HasSuffix(k, " events.events.k8s.io") || strings.HasSuffix(k, " events") {
			n += c
		}
	}
	return n
}

// Verb is the number of requests with this verb.
func (r Requests) Verb(verb string) int {
	n := 0
	for k, c := range r {
		if strings.HasPrefix(k, verb+" ") {
			n += c
		}
	}
	return n
}

// String lists the counts, highest first.
func (r Requests) String() string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if r[keys[i]] != r[keys[j]] {
			return r[keys[i]] > r[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%7d  %s\n", r[k], k)
	}
	return b.String()
}

type auditEvent struct {
	AuditID   string `json:"auditID"`
	Verb      string `json:"verb"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	RequestURI string `json:"requestURI"`
}

// readAudit counts the requests in a kube-apiserver audit log (JSON lines): those first seen before the byte
// offset mark, and those after it (none when mark is negative). A request appears once per stage (a watch has
// ResponseStarted and ResponseComplete); it is counted once, by its audit ID, where it first appears.
func readAudit(path string, mark int64) (before, after Requests, err error) {
	// kube-apiserver moves a full log aside as audit-<time>.log; the requests in it would not be counted.
	if rotated, _ := filepath.Glob(strings.TrimSuffix(path, ".log") + "-*.log"); len(rotated) > 0 {
		return nil, nil, fmt.Errorf("the audit log %s rotated (%s): its requests would be missed; raise --audit-log-maxsize", path, strings.Join(rotated, ", "))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	before, after = Requests{}, Requests{}
	offset := int64(0)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		out := before
		if mark >= 0 && offset >= mark {
			out = after
		}
		offset += int64(len(sc.Bytes())) + 1
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, nil, fmt.Errorf("audit log %s: %w", path, err)
		}
		if seen[ev.AuditID] {
			continue
		}
		seen[ev.AuditID] = true
		what := ev.RequestURI
		if ev.ObjectRef != nil {
			what = ev.ObjectRef.Resource
			if ev.ObjectRef.APIGroup != "" {
				what += "." + ev.ObjectRef.APIGroup
			}
			if ev.ObjectRef.Subresource != "" {
				what += "/" + ev.ObjectRef.Subresource
			}
		}
		if ev.ObjectRef != nil && ev.ObjectRef.Name == crdaccess.ClusterRoleName {
			what += " " + ownObject // ALM's own ClusterRole, one per cluster: not what installs cost
		}
		out[ev.Verb+" "+what]++
	}
	return before, after, sc.Err()
}

// Metrics are the samples of a Prometheus text exposition, by "name{labels}".
type Metrics map[string]float64

// Sum adds the samples of metric name whose labels contain every one of match (e.g. `controller="install"`).
func (m Metrics) Sum(name string, match ...string) float64 {
	total := 0.0
	for k, v := range m {
		metric, labels, _ := strings.Cut(k, "{")
		if metric != name {
			continue
		}
		ok := true
		for _, want := range match {
			if !strings.Contains(labels, want) {
				ok = false
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

// scrape reads a Prometheus text endpoint.
func scrape(ctx context.Context, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	out := Metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// procMemory reads a process's resident set size now (VmRSS) and at its peak (VmHWM), in bytes.
func procMemory(pid int) (rss, peak float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || key != "VmRSS" && key != "VmHWM" {
			continue
		}
		fields := strings.Fields(value) // "91234 kB"
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, 0, err
		}
		if key == "VmRSS" {
			rss = kb * 1024
		} else {
			peak = kb * 1024
		}
	}
	return rss, peak, nil
}

// download writes what url answers to the file path.
func download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Purposes sorts the requests by what they are for, as the README explains an install's cost: the bundle's objects,
// the OperatorVersion's create, its metadata (the cleanup finalizer), its status, the AppType's status, Events,
// reads (informers' lists and watches, discovery) and the rest.
func (r Requests) Purposes() map[string]int {
	out := map[string]int{}
	for k, c := range r {
		verb, resource, _ := strings.Cut(k, " ")
		var purpose string
		switch {
		case verb == "get" || verb == "list" || verb == "watch":
			purpose = "reads"
		case strings.HasSuffix(resource, " events.events.k8s.io") || resource == "events.events.k8s.io" || resource == "events":
			purpose = "events"
		case resource == "operatorversions.operators.alm.dev" && verb == "create":
			purpose = "ov-create"
		case resource == "operatorversions.operators.alm.dev":
			purpose = "ov-metadata"
		case resource == "operatorversions.operators.alm.dev/status":
			purpose = "ov-status"
		case resource == "apptypes.operators.alm.dev/status":
			purpose = "apptype-status"
		case verb == "create" || verb == "update" || verb == "patch":
			purpose = "objects"
		default:
			purpose = "other"
		}
		out[purpose] += c
	}
	return out
}

// MemoryUses says what ALM's resident memory at the end of a run is for, in bytes: "binary" (the executable's
// code and data, file-backed: RssFile), the heap's live objects sorted by HeapUses ("heap: informers", ...), "heap:
// garbage and free" (the heap's other resident pages: garbage not yet collected, free spans not yet returned),
// "stacks" and "runtime" (the Go runtime's own structures). status is ALM's /proc/<pid>/status read before the
// profile was taken (writing a profile touches the binary's symbol tables), m its metrics, profile its heap profile
// file.
func MemoryUses(ctx context.Context, status []byte, m Metrics, profile string) (map[string]float64, error) {
	kb := map[string]float64{}
	for _, line := range strings.Split(string(status), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if fields := strings.Fields(value); ok && len(fields) > 0 {
			kb[key], _ = strconv.ParseFloat(fields[0], 64)
		}
	}
	out := map[string]float64{"binary": (kb["RssFile"] + kb["RssShmem"]) * 1024}
	live, err := HeapUses(ctx, profile)
	if err != nil {
		return nil, err
	}
	total := 0.0
	for use, n := range live {
		out["heap: "+use] = n
		total += n
	}
	heap := m.Sum("go_memstats_heap_inuse_bytes") + m.Sum("go_memstats_heap_idle_bytes") - m.Sum("go_memstats_heap_released_bytes")
	out["heap: garbage and free"] = max(0, heap-total)
	out["stacks"] = m.Sum("go_memstats_stack_inuse_bytes")
	out["runtime"] = m.Sum("go_memstats_mspan_inuse_bytes") + m.Sum("go_memstats_mcache_inuse_bytes") + m.Sum("go_memstats_gc_sys_bytes") +
		m.Sum("go_memstats_other_sys_bytes") + m.Sum("go_memstats_buck_hash_sys_bytes")
	return out, nil
}
