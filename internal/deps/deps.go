// Package deps pins modules that the packages being written will import. Remove once they do.
package deps

import (
	_ "github.com/Kong/sdk-konnect-go"
	_ "github.com/blang/semver/v4"
	_ "github.com/operator-framework/api/pkg/manifests"
	_ "github.com/operator-framework/api/pkg/validation"
	_ "github.com/operator-framework/operator-registry/alpha/declcfg"
	_ "golang.org/x/time/rate"
)
