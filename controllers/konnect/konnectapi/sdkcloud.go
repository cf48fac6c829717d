package konnectapi

import (
	"context"
	"fmt"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
)

// CallSDK runs f, one Konnect API call named op ("<verb> <entity type>"), with the SDK under api: through the same
// organization's rate limit, 429 handling and metrics as every other call, its failure an *APIError with the
// status code. It is for kinds whose calls API does not name (the Dedicated Cloud Gateways, whose SDK models their
// package maps itself). An api that is not this package's (a test's fake) cannot run it.
func CallSDK(ctx context.Context, api API, op string, f func(ctx context.Context, sdk *sdkkonnectgo.SDK) error) error {
	a, ok := api.(*sdkAPI)
	if !ok {
		return fmt.Errorf("konnect %s: the client has no SDK", op)
	}
	return a.call(ctx, op, func(ctx context.Context) error { return f(ctx, a.sdk) })
}
