package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Names in a volume's directory that are not its payload, as a kubelet lays it out: the payload is in a directory
// "..<timestamp>", "..data" is a symlink to it, and each top-level entry of the payload is a symlink through
// "..data" ("tls.crt" -> "..data/tls.crt"). Swapping "..data" (a rename, which is atomic) switches every file at
// once, so a reader that follows the symlinks never sees a new certificate with an old key.
const (
	dataDir    = "..data"
	dataDirTmp = "..data_tmp"
)

// Write makes dir hold exactly payload (relative slash-separated path -> content) and says whether it changed
// anything: a payload equal to what dir holds is left alone (no file event for a watcher), another is written into
// a new timestamped directory that "..data" is then swapped to; the previous one is removed afterwards.
func Write(dir string, payload map[string][]byte) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	old, _ := os.Readlink(filepath.Join(dir, dataDir))
	if old != "" && same(filepath.Join(dir, old), payload) {
		return false, nil
	}
	ts, err := os.MkdirTemp(dir, ".."+timestamp())
	if err != nil {
		return false, err
	}
	for rel, content := range payload {
		file := filepath.Join(ts, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return false, err
		}
		if err := os.WriteFile(file, content, 0o600); err != nil {
			return false, err
		}
	}
	tmp := filepath.Join(dir, dataDirTmp)
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataDir)); err != nil {
		return false, fmt.Errorf("swapping %s: %w", filepath.Join(dir, dataDir), err)
	}
	if err := linkTopLevel(dir, payload); err != nil {
		return false, err
	}
	if old != "" && old != filepath.Base(ts) {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// linkTopLevel points each top-level entry of payload through "..data" and removes the entries that are gone.
func linkTopLevel(dir string, payload map[string][]byte) error {
	want := map[string]bool{}
	for rel := range payload {
		top, _, _ := strings.Cut(rel, "/")
		want[top] = true
	}
	for top := range want {
		link := filepath.Join(dir, top)
		if target, err := os.Readlink(link); err == nil && target == filepath.Join(dataDir, top) {
			continue
		}
		if err := os.RemoveAll(link); err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join(dataDir, top), link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") && !want[e.Name()] {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// same says whether the directory ts holds exactly payload.
func same(ts string, payload map[string][]byte) bool {
	n := 0
	err := filepath.WalkDir(ts, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(ts, p)
		if err != nil {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		want, ok := payload[filepath.ToSlash(rel)]
		if !ok || !bytes.Equal(content, want) {
			return errors.New("differs")
		}
		n++
		return nil
	})
	return err == nil && n == len(payload)
}

// timestamp names a payload directory by when it was written, as a kubelet does ("..2006_01_02_15_04_05.<random>").
func timestamp() string { return time.Now().UTC().Format("2006_01_02_15_04_05.") }
