// Package migrate converts package-manifest catalogs (the layout before registry+v1 bundles: a package directory
// with <package>.package.yaml and one directory per version) into registry+v1 bundle directories.
package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	opv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/almproject/alm/catalog/bundle"
)

// Rules of the refusals of PackageManifests.
const (
	RuleMissingPackageManifest = "missing-package-manifest"
	RuleInvalidPackageManifest = "invalid-package-manifest"
	RuleMissingCurrentCSV      = "missing-current-csv"
	RuleDuplicateCSV           = "duplicate-csv"
	RuleOutputExists           = "output-exists"
	RuleNotInChannel           = "not-in-channel"
)

// Options tune PackageManifests.
type Options struct {
	// Force replaces OUT/<package> directories that already exist.
	Force bool
}

// BundleDir is one bundle directory written by PackageManifests.
type BundleDir struct {
	Package        string
	Name           string // the CSV's metadata.name
	Version        string
	Dir            string // OUT/<package>/<version>
	Channels       []string
	DefaultChannel string
	Files          []string // written, relative to Dir
}

// Result is what PackageManifests wrote, and the warnings (CSVs in no channel, files left out).
type Result struct {
	Bundles  []BundleDir
	Problems []bundle.Problem
}

// Error lists every reason PackageManifests refused: nothing was written.
type Error struct{ Problems []bundle.Problem }

func (e *Error) Error() string {
	lines := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

// pmPackage is one package directory of the package-manifest layout.
type pmPackage struct {
	dir, file string // the package directory and its <pkg>.package.yaml
	manifest  manifests.PackageManifest
	csvs      []*pmCSV
	byName    map[string]*pmCSV
}

// pmCSV is one version directory: its CSV's graph fields and the files to write to manifests/.
type pmCSV struct {
	dir, file string // the version directory and its CSV file
	name      string
	version   semver.Version
	replaces  string
	skips     []string
	files     []pmFile
	channels  []string
}

type pmFile struct {
	name string
	data []byte
}

// PackageManifests converts the package-manifest layout in dir into registry+v1 bundle directories under out.
//
// dir is a package directory (a <package>.package.yaml with packageName, channels [{name, currentCSV}] and
// defaultChannel, and one sub-directory per version holding a ClusterServiceVersion, its CRDs and other manifests)
// or a directory of package directories. Each version becomes out/<package>/<version>/ with the version
// directory's manifests in manifests/ (a multi-document file is split, one object per file) and
// metadata/annotations.yaml naming the package, the CSV's channels and the default channel.
//
// A CSV is in a channel when it is reachable from the channel's currentCSV by following spec.replaces and
// spec.skips, transitively (edges to CSVs that are not in the package are ignored). A CSV in no channel is not
// written, with a not-in-channel warning. Everything is checked before anything is written; out/<package> must not
// exist unless opts.Force (then it is replaced).
func PackageManifests(dir, out string, opts Options) (*Result, error) {
	pkgDirs, problems := packageDirs(dir)
	if err := checkOverlap(dir, out); err != nil {
		problems = append(problems, *err)
	}
	var pkgs []*pmPackage
	for _, pd := range pkgDirs {
		p, more := readPackageDir(pd)
		problems = append(problems, more...)
		if p != nil {
			pkgs = append(pkgs, p)
		}
	}
	problems = append(problems, checkPackageNames(pkgs)...)
	res := &Result{}
	for _, p := range pkgs {
		res.Problems = append(res.Problems, p.assignChannels()...)
	}
	problems = append(problems, checkOutput(out, pkgs, opts.Force)...)
	if bundle.HasErrors(problems) {
		return nil, &Error{Problems: problems}
	}
	res.Problems = append(problems, res.Problems...) // warnings only
	for _, p := range pkgs {
		written, err := p.write(out, opts.Force)
		if err != nil {
			return res, err
		}
		res.Bundles = append(res.Bundles, written...)
	}
	return res, nil
}

// packageDirs is dir when it holds a package manifest, else its sub-directories (each must hold one).
func packageDirs(dir string) ([]string, []bundle.Problem) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, []bundle.Problem{bundle.Errorf(dir, bundle.RuleLoadFailed, "DIR is a package directory or a directory of them", "%v", err)}
	}
	if f, _ := packageManifestFile(dir, entries); f != "" {
		return []string{dir}, nil
	}
	hint := "a package directory holds <package>.package.yaml (packageName, channels, defaultChannel) next to one directory per version"
	var dirs []string
	var problems []bundle.Problem
	holdsFiles := false
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if !e.IsDir() {
			holdsFiles = holdsFiles || isManifestFile(e.Name())
			continue
		}
		sub := filepath.Join(dir, e.Name())
		subEntries, err := os.ReadDir(sub)
		if err != nil {
			problems = append(problems, bundle.Errorf(sub, bundle.RuleLoadFailed, "", "%v", err))
			continue
		}
		if f, _ := packageManifestFile(sub, subEntries); f != "" {
			dirs = append(dirs, sub)
			continue
		}
		if !hasSubDirs(subEntries) {
			holdsFiles = true // a version directory: dir is a package without its manifest
			continue
		}
		problems = append(problems, bundle.Errorf(sub, RuleMissingPackageManifest, hint, "no <package>.package.yaml in the package directory"))
	}
	if holdsFiles || len(dirs)+len(problems) == 0 {
		return nil, []bundle.Problem{bundle.Errorf(dir, RuleMissingPackageManifest, hint, "no <package>.package.yaml in %s", dir)}
	}
	return dirs, problems
}

func hasSubDirs(entries []os.DirEntry) bool {
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			return true
		}
	}
	return false
}

func isManifestFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// packageManifestFile is the package manifest among entries (*.package.yaml, *.package.yml or package.yaml), or a
// problem when there are several.
func packageManifestFile(dir string, entries []os.DirEntry) (string, *bundle.Problem) {
	var found []string
	for _, e := range entries {
		n := strings.ToLower(e.Name())
		if e.IsDir() || strings.HasPrefix(n, ".") {
			continue
		}
		if strings.HasSuffix(n, ".package.yaml") || strings.HasSuffix(n, ".package.yml") || n == "package.yaml" || n == "package.yml" {
			found = append(found, filepath.Join(dir, e.Name()))
		}
	}
	if len(found) > 1 {
		p := bundle.Errorf(found[1], RuleInvalidPackageManifest, "keep one package manifest per package directory",
			"more than one package manifest: %s", strings.Join(found, ", "))
		return found[0], &p
	}
	if len(found) == 0 {
		return "", nil
	}
	return found[0], nil
}

// checkOverlap refuses an OUT inside DIR or containing it: --force would remove input, and a second run would read
// the output as input.
func checkOverlap(dir, out string) *bundle.Problem {
	ad, err1 := filepath.Abs(dir)
	ao, err2 := filepath.Abs(out)
	if err := errors.Join(err1, err2); err != nil {
		p := bundle.Errorf(out, RuleOutputExists, "", "%v", err)
		return &p
	}
	sep := string(filepath.Separator)
	if ad == ao || strings.HasPrefix(ao, ad+sep) || strings.HasPrefix(ad, ao+sep) {
		p := bundle.Errorf(out, RuleOutputExists, "write the bundles to a directory outside DIR, e.g. a sibling of it",
			"OUT %s and DIR %s overlap", out, dir)
		return &p
	}
	return nil
}

// checkPackageNames refuses two package directories with one packageName.
func checkPackageNames(pkgs []*pmPackage) []bundle.Problem {
	seen := map[string]string{}
	var problems []bundle.Problem
	for _, p := range pkgs {
		name := p.manifest.PackageName
		if first, ok := seen[name]; ok {
			problems = append(problems, bundle.Errorf(p.file, RuleInvalidPackageManifest, "give each package its own packageName",
				"packageName %q is also declared by %s", name, first))
			continue
		}
		seen[name] = p.file
	}
	return problems
}

// checkOutput refuses to write into an existing OUT/<package> unless force.
func checkOutput(out string, pkgs []*pmPackage, force bool) []bundle.Problem {
	if force {
		return nil
	}
	var problems []bundle.Problem
	for _, p := range pkgs {
		target := filepath.Join(out, p.manifest.PackageName)
		if _, err := os.Lstat(target); err == nil {
			problems = append(problems, bundle.Errorf(target, RuleOutputExists, "pass --force to replace it, or choose another OUT",
				"already exists; migrate never overwrites without --force"))
		}
	}
	return problems
}

// readPackageDir reads a package directory: its package manifest and every version directory.
func readPackageDir(dir string) (*pmPackage, []bundle.Problem) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, []bundle.Problem{bundle.Errorf(dir, bundle.RuleLoadFailed, "", "%v", err)}
	}
	file, dup := packageManifestFile(dir, entries)
	if dup != nil {
		return nil, []bundle.Problem{*dup}
	}
	p := &pmPackage{dir: dir, file: file, byName: map[string]*pmCSV{}}
	problems := p.readManifest()
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		c, more := readVersionDir(filepath.Join(dir, e.Name()))
		problems = append(problems, more...)
		if c != nil {
			p.csvs = append(p.csvs, c)
		}
	}
	if bundle.HasErrors(problems) {
		return nil, problems // the version directories' errors first: a missing currentCSV may be one of them
	}
	problems = append(problems, p.checkCSVs()...)
	if bundle.HasErrors(problems) {
		return nil, problems
	}
	return p, problems
}

// readManifest reads and checks the package manifest.
func (p *pmPackage) readManifest() []bundle.Problem {
	data, err := os.ReadFile(p.file)
	if err != nil {
		return []bundle.Problem{bundle.Errorf(p.file, bundle.RuleLoadFailed, "", "%v", err)}
	}
	const hint = "a package manifest is packageName: <name>, channels: [{name: <channel>, currentCSV: <CSV name>}], defaultChannel: <channel>"
	if err := yaml.UnmarshalStrict(data, &p.manifest); err != nil {
		return []bundle.Problem{bundle.Errorf(p.file, RuleInvalidPackageManifest, hint, "%v", err)}
	}
	m := &p.manifest
	var problems []bundle.Problem
	bad := func(format string, args ...any) {
		problems = append(problems, bundle.Errorf(p.file, RuleInvalidPackageManifest, hint, format, args...))
	}
	if m.PackageName == "" {
		bad("no packageName")
	}
	if len(m.Channels) == 0 {
		bad("no channels")
	}
	seen := map[string]bool{}
	for _, c := range m.Channels {
		if c.Name == "" || c.CurrentCSVName == "" || seen[c.Name] {
			bad("channel %q: every channel needs a unique name and a currentCSV", c.Name)
		}
		seen[c.Name] = true
	}
	switch {
	case m.DefaultChannelName == "" && len(m.Channels) == 1:
		m.DefaultChannelName = m.Channels[0].Name
	case m.DefaultChannelName == "" && len(m.Channels) > 1:
		bad("no defaultChannel; a package with several channels must name one")
	case m.DefaultChannelName != "" && !seen[m.DefaultChannelName]:
		bad("defaultChannel %q is not one of the channels", m.DefaultChannelName)
	}
	return problems
}

// checkCSVs refuses two CSVs with one name or one version, and a channel whose currentCSV does not exist.
func (p *pmPackage) checkCSVs() []bundle.Problem {
	var problems []bundle.Problem
	byVersion := map[string]*pmCSV{}
	sort.Slice(p.csvs, func(i, j int) bool { return p.csvs[i].file < p.csvs[j].file })
	for _, c := range p.csvs {
		if first, ok := p.byName[c.name]; ok {
			problems = append(problems, bundle.Errorf(c.file, RuleDuplicateCSV, "give each version's CSV its own metadata.name",
				"CSV %s is also in %s", c.name, first.file))
			continue
		}
		p.byName[c.name] = c
		v := c.version
		v.Build = nil
		if first, ok := byVersion[v.String()]; ok {
			problems = append(problems, bundle.Errorf(c.file, RuleDuplicateCSV, "each version directory holds a different spec.version",
				"CSV %s has version %s, like %s in %s", c.name, c.version, first.name, first.file))
			continue
		}
		byVersion[v.String()] = c
	}
	for _, ch := range p.manifest.Channels {
		if ch.CurrentCSVName != "" && p.byName[ch.CurrentCSVName] == nil {
			problems = append(problems, bundle.Errorf(p.file, RuleMissingCurrentCSV,
				"set currentCSV to the metadata.name of a CSV in one of the version directories",
				"channel %q: currentCSV %s is not the name of any CSV in %s", ch.Name, ch.CurrentCSVName, p.dir))
		}
	}
	sort.Slice(p.csvs, func(i, j int) bool { return p.csvs[i].version.LT(p.csvs[j].version) })
	return problems
}

// assignChannels puts each CSV in the channels whose currentCSV reaches it through replaces and skips, and warns
// about CSVs in no channel (they are not written).
func (p *pmPackage) assignChannels() []bundle.Problem {
	for _, ch := range p.manifest.Channels {
		seen := map[string]bool{}
		queue := []string{ch.CurrentCSVName}
		for len(queue) > 0 {
			name := queue[0]
			queue = queue[1:]
			c := p.byName[name]
			if c == nil || seen[name] {
				continue
			}
			seen[name] = true
			c.channels = append(c.channels, ch.Name)
			queue = append(append(queue, c.replaces), c.skips...)
		}
	}
	var problems []bundle.Problem
	for _, c := range p.csvs {
		sort.Strings(c.channels)
		if len(c.channels) == 0 {
			problems = append(problems, bundle.Warnf(c.file, RuleNotInChannel,
				"make a channel's currentCSV reach it through replaces or skips, or delete the version directory",
				"CSV %s is in no channel of %s; it is not migrated", c.name, p.file))
		}
	}
	return problems
}

// csvFields are the fields of a CSV the migration reads.
type csvFields struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  any      `json:"version"`
		Replaces string   `json:"replaces"`
		Skips    []string `json:"skips"`
	} `json:"spec"`
}

// readVersionDir reads one version directory: exactly one ClusterServiceVersion, and the manifests to copy.
func readVersionDir(dir string) (*pmCSV, []bundle.Problem) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, []bundle.Problem{bundle.Errorf(dir, bundle.RuleLoadFailed, "", "%v", err)}
	}
	c := &pmCSV{dir: dir}
	var problems []bundle.Problem
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case e.IsDir():
			problems = append(problems, bundle.Errorf(path, bundle.RuleNestedDirectory,
				"keep every manifest of a version directly in its directory", "a version directory must not contain directories"))
		case !isManifestFile(e.Name()):
			problems = append(problems, bundle.Warnf(path, bundle.RuleIgnoredDocument, "only .yaml, .yml and .json files are manifests",
				"not a manifest; left out of the bundle"))
		default:
			problems = append(problems, c.readFile(path)...)
		}
	}
	switch {
	case c.file == "" && !bundle.HasErrors(problems):
		return nil, append(problems, bundle.Errorf(dir, bundle.RuleMissingCSV, "add the version's ClusterServiceVersion (*.clusterserviceversion.yaml)",
			"no ClusterServiceVersion in the version directory"))
	case bundle.HasErrors(problems):
		return nil, problems
	}
	return c, problems
}

// readFile reads one manifest file of a version directory, splitting a multi-document file into one file per object.
func (c *pmCSV) readFile(path string) []bundle.Problem {
	data, err := os.ReadFile(path)
	if err != nil {
		return []bundle.Problem{bundle.Errorf(path, bundle.RuleLoadFailed, "", "%v", err)}
	}
	docs, err := splitDocuments(data)
	if err != nil {
		return []bundle.Problem{bundle.Errorf(path, bundle.RuleMalformedYAML, "fix the YAML syntax", "%v", err)}
	}
	name := filepath.Base(path)
	if len(docs) == 1 {
		c.files = append(c.files, pmFile{name: name, data: data})
	}
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	for i, doc := range docs {
		if len(docs) > 1 {
			y, err := yaml.JSONToYAML(doc)
			if err != nil {
				return []bundle.Problem{bundle.Errorf(path, bundle.RuleMalformedYAML, "fix the YAML syntax", "document %d: %v", i+1, err)}
			}
			c.files = append(c.files, pmFile{name: fmt.Sprintf("%s-%d.yaml", stem, i+1), data: y})
		}
		if p := c.readCSV(path, doc); p != nil {
			return []bundle.Problem{*p}
		}
	}
	return nil
}

// readCSV reads the graph fields of doc when it is a ClusterServiceVersion.
func (c *pmCSV) readCSV(path string, doc []byte) *bundle.Problem {
	var f csvFields
	if err := json.Unmarshal(doc, &f); err != nil || f.Kind != opv1alpha1.ClusterServiceVersionKind {
		return nil
	}
	if c.file != "" {
		p := bundle.Errorf(path, bundle.RuleMultipleCSVs, "a version directory holds one version of one operator",
			"a second ClusterServiceVersion (the first is in %s)", c.file)
		return &p
	}
	s, _ := f.Spec.Version.(string)
	v, err := semver.Parse(s)
	if err != nil || f.Metadata.Name == "" {
		p := bundle.Errorf(path, bundle.RuleInvalidSemver, "set metadata.name and spec.version to a semantic version such as 1.2.3 (no leading v)",
			"CSV %q: spec.version %v is not a semantic version", f.Metadata.Name, f.Spec.Version)
		return &p
	}
	c.file, c.name, c.version, c.replaces, c.skips = path, f.Metadata.Name, v, f.Spec.Replaces, f.Spec.Skips
	return nil
}

// splitDocuments returns the non-empty YAML or JSON documents of data, as JSON.
func splitDocuments(data []byte) ([][]byte, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs [][]byte
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, err
		}
		if t := bytes.TrimSpace(doc); len(t) > 0 && string(t) != "null" && string(t) != "{}" {
			docs = append(docs, doc)
		}
	}
}

// write writes the package's bundle directories under out (replacing out/<package> with force).
func (p *pmPackage) write(out string, force bool) ([]BundleDir, error) {
	pkgOut := filepath.Join(out, p.manifest.PackageName)
	if force {
		if err := os.RemoveAll(pkgOut); err != nil {
			return nil, err
		}
	}
	var written []BundleDir
	for _, c := range p.csvs {
		if len(c.channels) == 0 {
			continue
		}
		b := BundleDir{Package: p.manifest.PackageName, Name: c.name, Version: c.version.String(),
			Dir: filepath.Join(pkgOut, c.version.String()), Channels: c.channels, DefaultChannel: p.manifest.DefaultChannelName}
		files := append([]pmFile{}, c.files...)
		for i := range files {
			files[i].name = "manifests/" + files[i].name
		}
		files = append(files, pmFile{name: "metadata/annotations.yaml", data: annotationsYAML(b)})
		for _, f := range files {
			if err := writeMigrated(filepath.Join(b.Dir, f.name), f.data); err != nil {
				return written, err
			}
			b.Files = append(b.Files, f.name)
		}
		written = append(written, b)
	}
	return written, nil
}

func writeMigrated(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// annotationsYAML is the registry+v1 metadata/annotations.yaml of a migrated bundle.
func annotationsYAML(b BundleDir) []byte {
	return fmt.Appendf(nil, `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: %s
  operators.operatorframework.io.bundle.channels.v1: %s
  operators.operatorframework.io.bundle.channel.default.v1: %s
`, quoteYAML(b.Package), quoteYAML(strings.Join(b.Channels, ",")), quoteYAML(b.DefaultChannel))
}

// quoteYAML is s as a YAML double-quoted scalar (JSON strings are valid YAML).
func quoteYAML(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
