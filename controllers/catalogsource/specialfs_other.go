//go:build !linux

package catalogsource

// specialFS says whether dir is on a special file system; only Linux's are known.
func specialFS(string) (string, bool) { return "", false }
