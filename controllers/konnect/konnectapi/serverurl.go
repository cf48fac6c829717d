package konnectapi

import (
	"fmt"
	"net/url"
	"strings"
)

// NormalizeServerURL turns what a user may write in spec.serverURL into the base URL of the Konnect API: a bare
// region host ("eu.api.konghq.com") gets https://, a full http(s) URL is kept (without a trailing slash).
func NormalizeServerURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("serverURL is empty")
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("serverURL %q: %w", raw, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("serverURL %q: scheme must be https or http", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("serverURL %q has no host", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("serverURL %q: user info, query and fragment are not allowed", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u.String(), nil
}
