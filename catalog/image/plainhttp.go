package image

import "github.com/almproject/alm/catalog/registrynet"

// RulePlainHTTP: a request over plain HTTP that the client does not allow: only a client with Options.Insecure
// talks plain HTTP, and only to a loopback address (checked on the address dialled). go-containerregistry falls
// back to plain HTTP by itself for loopback, *.local and RFC 1918 registries; this rule stops it, so that
// credentials and content never cross a network in cleartext. Image is the registry's host:port.
const RulePlainHTTP = registrynet.RulePlainHTTP
