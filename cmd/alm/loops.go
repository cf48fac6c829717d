package main

import (
	"fmt"
	"sort"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/almproject/alm/controllers/gc"
	"github.com/almproject/alm/controllers/install"
	"github.com/almproject/alm/controllers/upgrade"
)

// Loop groups: the catalog loops decide what should be installed; the lifecycle loops install, upgrade and collect.
const (
	groupCatalog   = "catalog"
	groupLifecycle = "lifecycle"
)

// loop is one of ALM's reconciliation loops.
type loop struct {
	name  string
	group string
	setup func(ctrl.Manager, *options) error
}

// registry lists every loop this binary can run, in start order.
var registry = []loop{
	{name: "install", group: groupLifecycle, setup: func(mgr ctrl.Manager, o *options) error {
		return install.New(mgr, o.installTimeout).SetupWithManager(mgr)
	}},
	{name: "upgrade", group: groupLifecycle, setup: func(mgr ctrl.Manager, o *options) error {
		return upgrade.New(mgr, o.installTimeout).SetupWithManager(mgr)
	}},
	{name: "gc", group: groupLifecycle, setup: func(mgr ctrl.Manager, _ *options) error {
		return gc.New(mgr).SetupWithManager(mgr)
	}},
}

func loopsUsage() string {
	return fmt.Sprintf("Comma-separated loops to run: \"all\", a group (%q or %q) or loop names (%s). "+
		"Run the catalog loops and the lifecycle loops in two managers to scale them apart.",
		groupCatalog, groupLifecycle, strings.Join(names(registry), ", "))
}

// selectLoops turns the --loops value into the loops to run, in registry order.
func selectLoops(spec string) ([]loop, error) {
	want := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		matched := false
		for _, l := range registry {
			if item == "all" || item == l.group || item == l.name {
				want[l.name] = true
				matched = true
			}
		}
		if !matched && item != "all" {
			known := append([]string{"all", groupCatalog, groupLifecycle}, names(registry)...)
			sort.Strings(known[3:])
			return nil, fmt.Errorf("--loops: unknown loop or group %q; known: %s", item, strings.Join(known, ", "))
		}
	}
	var out []loop
	for _, l := range registry {
		if want[l.name] {
			out = append(out, l)
		}
	}
	return out, nil
}

func names(loops []loop) []string {
	out := make([]string, 0, len(loops))
	for _, l := range loops {
		out = append(out, l.name)
	}
	return out
}
