package catalogsource

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree makes root/{open/cat,open/link-out,open/link-in,cache/b,scratch/catalog-1,elsewhere} in a temporary directory: "open" is the
// admin's root, "cache" the bundle cache, "scratch" the catalog scratch directory.
func tree(t *testing.T) (dir string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"open/cat", "cache/b", "scratch/catalog-1", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"open/link-out": filepath.Join(dir, "elsewhere"), "open/link-in": filepath.Join(dir, "open", "cat"),
		"open/link-cache": filepath.Join(dir, "cache"), "elsewhere/link-cache": filepath.Join(dir, "cache", "b")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDirectoryPolicyCheck(t *testing.T) {
	dir := tree(t)
	open, cache := filepath.Join(dir, "open"), filepath.Join(dir, "cache")
	scratch := filepath.Join(dir, "scratch")
	forbidden := []ForbiddenDir{{Dir: cache, What: "ALM's bundle cache", Flag: "--bundle-cache-dir"},
		{Dir: scratch, What: "ALM's catalog scratch directory", Flag: "--catalog-scratch-dir"}}
	withRoot := DirectoryPolicy{Namespace: "alm-system", Root: open, Forbidden: forbidden}
	noRoot := DirectoryPolicy{Namespace: "alm-system", Forbidden: forbidden}
	for _, tc := range []struct {
		name      string
		policy    DirectoryPolicy
		namespace string
		path      string
		want      string // resolved path; empty: refused
		wantMsg   []string
	}{
		{name: "tenant, no root: /", policy: noRoot, namespace: "tenant", path: "/",
			wantMsg: []string{"spec.directory.path /", "alm-system", "--directory-catalog-root", "almctl publish"}},
		{name: "tenant, no root: a path that does not exist is refused, not looked up", policy: noRoot, namespace: "tenant",
			path: "/nonexistent/x", wantMsg: []string{"--directory-catalog-root, which is not set"}},
		{name: "zero policy refuses every namespace", policy: DirectoryPolicy{}, namespace: "", path: filepath.Join(open, "cat"),
			wantMsg: []string{"not set"}},
		{name: "tenant under the root", policy: withRoot, namespace: "tenant", path: filepath.Join(open, "cat"), want: filepath.Join(open, "cat")},
		{name: "tenant: the root itself", policy: withRoot, namespace: "tenant", path: open, want: open},
		{name: "tenant: link inside the root", policy: withRoot, namespace: "tenant", path: filepath.Join(open, "link-in"), want: filepath.Join(open, "cat")},
		{name: "tenant: .. out of the root", policy: withRoot, namespace: "tenant", path: open + "/../elsewhere",
			wantMsg: []string{"is not under " + open, "--directory-catalog-root"}},
		{name: "tenant: outside the root, does not exist", policy: withRoot, namespace: "tenant", path: "/nonexistent",
			wantMsg: []string{"is not under"}},
		{name: "tenant: / with a root", policy: withRoot, namespace: "tenant", path: "/", wantMsg: []string{"is not under"}},
		{name: "tenant: symlink out of the root", policy: withRoot, namespace: "tenant", path: filepath.Join(open, "link-out"),
			wantMsg: []string{"resolved: " + filepath.Join(dir, "elsewhere"), "is not under"}},
		{name: "tenant: symlink into the cache", policy: DirectoryPolicy{Namespace: "alm-system", Root: dir, Forbidden: forbidden},
			namespace: "tenant", path: filepath.Join(open, "link-cache"), wantMsg: []string{"bundle cache " + cache, "--bundle-cache-dir"}},
		{name: "ALM: any directory", policy: noRoot, namespace: "alm-system", path: filepath.Join(dir, "elsewhere"), want: filepath.Join(dir, "elsewhere")},
		{name: "ALM: the catalog scratch directory", policy: noRoot, namespace: "alm-system", path: filepath.Join(scratch, "catalog-1"),
			wantMsg: []string{"catalog scratch directory " + scratch, "--catalog-scratch-dir"}},
		{name: "ALM: the cache", policy: noRoot, namespace: "alm-system", path: filepath.Join(cache, "b"), wantMsg: []string{"bundle cache"}},
		{name: "ALM: a directory that holds the cache", policy: noRoot, namespace: "alm-system", path: dir, wantMsg: []string{"bundle cache"}},
		{name: "ALM: /", policy: noRoot, namespace: "alm-system", path: "/", wantMsg: []string{"bundle cache"}},
		{name: "ALM: a link into the cache", policy: noRoot, namespace: "alm-system", path: filepath.Join(dir, "elsewhere", "link-cache"),
			wantMsg: []string{"resolved: " + filepath.Join(cache, "b"), "bundle cache"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.policy.Check(tc.namespace, tc.path)
			var refused *directoryRefusedError
			switch {
			case tc.want != "" && (err != nil || got != tc.want):
				t.Fatalf("Check(%s, %s) = %q, %v; want %q", tc.namespace, tc.path, got, err, tc.want)
			case tc.want == "" && !errors.As(err, &refused):
				t.Fatalf("Check(%s, %s) = %q, %v; want a refusal", tc.namespace, tc.path, got, err)
			}
			for _, s := range append(tc.wantMsg, "spec.directory.path "+tc.path) {
				if err != nil && !strings.Contains(err.Error(), s) {
					t.Errorf("message %q does not say %q", err, s)
				}
			}
		})
	}
}

// TestDirectoryPolicyMissingPathUnderRoot: a path the policy allows but that does not exist is a source error (it
// may appear), not a refusal.
func TestDirectoryPolicyMissingPathUnderRoot(t *testing.T) {
	dir := tree(t)
	_, err := DirectoryPolicy{Root: dir}.Check("tenant", filepath.Join(dir, "missing"))
	var refused *directoryRefusedError
	if err == nil || errors.As(err, &refused) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Check of a missing path under the root: %v, want not-exist", err)
	}
}

func TestWalkDirRefuses(t *testing.T) {
	dir := tree(t)
	fifo := filepath.Join(dir, "fifo")
	if err := os.MkdirAll(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, "catalog.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, root string
		want       []string // empty: walked
	}{
		{name: "links inside", root: filepath.Join(dir, "open", "cat")},
		{name: "symlink out", root: filepath.Join(dir, "open"), want: []string{"link-cache resolves to " + filepath.Join(dir, "cache"), "outside the directory"}},
		{name: "FIFO", root: fifo, want: []string{"catalog.yaml is not a regular file"}},
		{name: "/proc", root: "/proc", want: []string{"on a proc file system"}},
		{name: "/sys", root: "/sys", want: []string{"on a sysfs file system"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			visited := 0
			err := walkDir(tc.root, func(string, fs.FileInfo) { visited++ })
			var refused *directoryRefusedError
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("walkDir(%s): %v", tc.root, err)
				}
				return
			}
			if !errors.As(err, &refused) {
				t.Fatalf("walkDir(%s) = %v after %d entries, want a refusal", tc.root, err, visited)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q does not say %q", err, s)
				}
			}
			if strings.HasPrefix(tc.root, "/proc") || strings.HasPrefix(tc.root, "/sys") {
				if visited != 0 {
					t.Errorf("walkDir(%s) visited %d entries before refusing", tc.root, visited)
				}
			}
		})
	}
}
