package fbc

import (
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
)

// LoadFS reads every File-Based Catalog file (.json, .yaml, .yml) of fsys in lexical order: the configs directory
// of a catalog image. Other files are ignored, as opm ignores them; a file that does not parse is a problem named
// by prefix and its path, and the other files still load.
func LoadFS(fsys fs.FS, prefix string) (*Contents, error) {
	return LoadFSWith(fsys, prefix, LoadOptions{})
}

// fileResult is what the concurrent parse made of one file.
type fileResult struct {
	contents *Contents
	docs     int  // documents read
	cut      bool // stopped because the files parsed together passed MaxDocuments
	err      error
}

// loadWorkers bounds the files LoadFS parses at once, whatever GOMAXPROCS is (ALM's container has a memory limit,
// not a CPU limit): each may hold a document of up to MaxDocumentBytes and what is made of it, and one of them only
// a YAML one (LoadOptions.yaml).
const loadWorkers = 2

// LoadFSWith is LoadFS with options. The files are parsed concurrently (loadWorkers at a time) and merged in lexical
// order, so the result is the one a parse of the files one after another gives: when the catalog has more than
// MaxDocuments documents, the files from the first one the concurrent parse did not read whole are parsed again one
// at a time, counting from the documents before them, up to the file that passes the limit.
func LoadFSWith(fsys fs.FS, prefix string, opts LoadOptions) (*Contents, error) {
	maxDocs := opts.MaxDocuments
	if maxDocs <= 0 {
		maxDocs = DefaultMaxDocuments
	}
	var paths []string
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && IsFBCFile(path) {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		return &Contents{}, err
	}
	results := loadFilesConcurrently(fsys, prefix, paths, opts)
	c, docs := &Contents{}, 0
	for i := range paths {
		r := results[i]
		results[i] = fileResult{}
		if r.err != nil {
			return c, r.err
		}
		if !r.cut && docs+r.docs <= maxDocs {
			docs += r.docs
			c.Add(r.contents)
			continue
		}
		opts.documents = &docs // the rest is parsed again, one file at a time (results is not read any more)
		for _, path := range paths[i:] {
			if docs > maxDocs {
				break // the file that passed the limit said so
			}
			contents, err := loadFSFile(fsys, prefix, path, opts)
			if err != nil {
				return c, err
			}
			c.Add(contents)
		}
		break
	}
	return c, nil
}

// loadFilesConcurrently parses the files at paths, loadWorkers at a time (at most GOMAXPROCS), each counting its
// documents from 0; together they stop once they have read more than MaxDocuments documents.
func loadFilesConcurrently(fsys fs.FS, prefix string, paths []string, opts LoadOptions) []fileResult {
	results := make([]fileResult, len(paths))
	total, yaml := new(atomic.Int64), make(chan struct{}, 1)
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(loadWorkers, runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r := &results[i]
				o := opts
				o.documents, o.total, o.cut, o.yaml = new(int), total, &r.cut, yaml
				r.contents, r.err = loadFSFile(fsys, prefix, paths[i], o)
				r.docs = *o.documents
			}
		}()
	}
	for i := range paths {
		work <- i
	}
	close(work)
	wg.Wait()
	return results
}

// loadFSFile parses one file of fsys.
func loadFSFile(fsys fs.FS, prefix, path string, opts LoadOptions) (*Contents, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadWith(f, prefix+path, opts), nil
}
