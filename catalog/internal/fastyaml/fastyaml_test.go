package fastyaml

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/almproject/alm/test/corpus"
)

// sameAsSlow checks that when the fast YAML reader accepts data, it yields exactly what the full parser yields.
func sameAsSlow(t *testing.T, name string, data []byte) (accepted bool) {
	t.Helper()
	fast, ok := toJSON(data)
	if !ok {
		return false
	}
	slow, more, err := decodeSlow(data)
	if err != nil || more {
		t.Errorf("%s: the fast reader accepts what the full parser refuses (more=%v): %v", name, more, err)
		return true
	}
	if !bytes.Equal(fast, slow) {
		t.Errorf("%s: fast and full YAML readers differ:\nfast: %.600s\nfull: %.600s", name, fast, slow)
	}
	var want Head
	wantErr := json.Unmarshal(slow, &want)
	raw, head, ok := Manifest(data)
	if ok != (wantErr == nil) || (ok && (!bytes.Equal(raw, slow) || !reflect.DeepEqual(head, want))) {
		t.Errorf("%s: Manifest head %+v (ok %v), want %+v (%v)", name, head, ok, want, wantErr)
	}
	return true
}

// TestFastYAMLMatchesFullParser: every YAML file of catalog/ (its testdata), and a generated corpus of real-sized bundles.
func TestFastYAMLMatchesFullParser(t *testing.T) {
	dirs := []string{"../.."} // every YAML file under catalog/
	gen := t.TempDir()
	if _, err := corpus.Generate(gen, corpus.Options{Packages: 3, Versions: 2, CRDs: 2, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, gen)
	files, accepted := 0, 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			if sameAsSlow(t, path, data) {
				accepted++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d of %d YAML files read by the fast path", accepted, files)
	if accepted < files/2 {
		t.Errorf("the fast path reads only %d of %d files", accepted, files)
	}
}

// fastYAMLCases are shapes the fast reader must either read exactly or leave to the full parser.
var fastYAMLCases = []string{
	"a: 1\nb: -2\nc: 007\nd: 1.5\ne: 1.2.3\nf: 0x1f\ng: 1e3\nh: 2001-12-14\ni: 12:30\nj: 1_000\nk: -\n",
	"a: yes\nb: No\nc: on\nd: ~\ne:\nf: null\ng: y\nh: .inf\ni: <<\n",
	"b: 1\na: 2\nc:\n  z: 1\n  y: 2\n",
	"a: 1\na: 2\n",
	"apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  labels:\n    a: b\nspec: {}\nstatus:\n  loadBalancer: {}\n",
	"kind: Service\napiVersion: v1\nmetadata:\n  name: x\n",
	"apiVersion: 1\nkind: Service\n",
	"apiVersion: v1\nkind: Service\nmetadata:\n  name:\n  - x\n",
	"apiVersion: v1\nkind: Service\nstatus:\n",
	"b: 1\na: 2\nc:\n  z: 1\n  x: [ ]\n  w:\n    v: 0\n    u: |-\n      t\n",
	"a: yes\nb: No\nc: on\nd: ~\ne:\nf: null\ng: OFF\n",
	"x: -1\nz: 0\nw: 922337203685477580\nv: 1.2.3.4\n",
	"list:\n- a\n- b: 1\n  c: 2\n- - x\n  - y\n-\n  d: 1\n-\n- 'q'\n",
	"list:\n  - a\n  -   b: 1\n      c: 2\nnext: 1\n",
	"desc: one two\n  three\n  four: five\n",
	"desc: one two\n  three\n\n  four\n",
	"desc: one two\n   three\n# comment\nk: v\n",
	"s: 'it''s\n  folded\n\n  and broken   \n  again'\n",
	"s: 'a' # comment\n",
	"s: \"a\\\"b\\\\c\\n\\td/\"\nt: \"x\\u0041\"\nu: \"multi\n  line\"\n",
	"lit: |\n  line 1\n\n    indented\n  # not a comment\n\n\nnext: |-\n  a\n  b\nlast: 1\n",
	"lit: |\n\n  leading empty\n",
	"lit: |2\n  x\n",
	"fold: >\n  a\n  b\n",
	"e: []\nf: {}\ng: [a, b]\nh: {a: 1}\n",
	"anchor: &a 1\nalias: *a\ntag: !!str 1\n",
	"---\na: 1\n",
	"a: 1\n---\nb: 2\n",
	"a: 1\n...\n",
	"\"quoted key\": 1\n",
	"html: <a & b>\nuni: ünïcødé\nurl: http://x/y?a=b#c\n",
	"key with spaces: v\nk.e/y-1_2: v\n",
	"a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
	"a: b: c\n",
	"- a\n- b\n",
	"plain scalar\n",
	"a: 'unterminated\n",
	"a:\n    b: 1\n  c: 2\n",
	"x: -1\ny: -0\nz: 0\nw: 9223372036854775807\nv: 12345678901234567890\n",
	"args:\n- --leader-elect\n- --metrics-bind-address=:8080\n- -v=2\n",
	"a: b #c\n",
	"a: b#c\nb: c:d\nc: :x\nd: ?x\ne: x:\n",
	"a:\tb\n",
	"k: v\r\n",
}

func TestFastYAMLCases(t *testing.T) {
	for i, c := range fastYAMLCases {
		sameAsSlow(t, "case "+string(rune('A'+i)), []byte(c))
	}
}

func FuzzFastYAML(f *testing.F) {
	for _, c := range fastYAMLCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsSlow(t, "fuzz", data)
	})
}
