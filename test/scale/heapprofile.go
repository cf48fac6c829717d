package scale

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// HeapUses sorts the bytes in use of a Go heap profile file (/debug/pprof/heap) by what holds them, judged from the
// functions on each allocation's stack (read with `go tool pprof -traces`): the informer caches (objects decoded from
// list and watch streams), reconciles (copies, plans and patches of reconciles under way), Events, the catalogs,
// and the rest (the runtime, package initialisation, metrics, logging).
func HeapUses(ctx context.Context, path string) (map[string]float64, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-sample_index=inuse_space", "-traces", path).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof -traces %s: %w", path, err)
	}
	uses := map[string]float64{}
	var value float64
	var frames []string
	flush := func() {
		if frames != nil {
			uses[heapUse(frames)] += value
		}
		value, frames = 0, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(line, " ") || strings.HasSuffix(fields[0], ":") {
			continue // headers, and labels such as "bytes:  16B"
		}
		if frames == nil && len(fields) >= 2 {
			// The first line of a trace: its value ("12.50kB", "1.20MB", "0") and its innermost frame.
			value = parseSize(fields[0])
			frames = append(frames, fields[1])
			continue
		}
		frames = append(frames, fields[0])
	}
	flush()
	return uses, sc.Err()
}

// parseSize reads a size as pprof prints it: "0", "512B", "12.50kB", "1.20MB", "2GB".
func parseSize(s string) float64 {
	for _, u := range []struct {
		suffix string
		factor float64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f * u.factor
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// heapUse names what holds one allocation, from the innermost frame outwards.
func heapUse(frames []string) string {
	for _, name := range frames {
		switch {
		// The caches' transforms (package slim) run in the informers, under a loop package's name when inlined.
		case strings.Contains(name, "alm/internal/slim."), strings.Contains(name, "tools/cache.(*RealFIFO)"):
			return "informers"
		case strings.Contains(name, "client-go/tools/events"), strings.Contains(name, "client-go/tools/record"):
			return "events"
		case strings.Contains(name, "alm/catalog/"), strings.Contains(name, "/controllers/registry"),
			strings.Contains(name, "/controllers/catalogsource"):
			return "catalogs"
		case strings.Contains(name, "internal/controller.(*Controller"), strings.Contains(name, "alm/controllers/"):
			return "reconciles"
		case strings.Contains(name, "tools/cache.(*Reflector)"), strings.Contains(name, "watch.(*StreamWatcher)"),
			strings.Contains(name, "tools/cache.(*threadSafeMap)"), strings.Contains(name, "tools/cache.(*DeltaFIFO)"),
			strings.Contains(name, "tools/pager"), strings.Contains(name, "cache.(*sharedIndexInformer)"):
			return "informers"
		}
	}
	return "other"
}
