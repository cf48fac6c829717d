package konnectsim_test

import (
	"context"
	"fmt"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"

	"github.com/almproject/alm/test/konnectsim"
)

// A create whose response is lost: the client sees an error, the simulator
// holds the service, and the counters show one call.
func Example() {
	sim := konnectsim.New(konnectsim.Options{Seed: 1})
	if err := sim.Start(); err != nil {
		panic(err)
	}
	defer sim.Close()

	token := konnectsim.DefaultToken
	sdk := sdkkonnectgo.New(
		sdkkonnectgo.WithServerURL(sim.URL()),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: &token}),
		sdkkonnectgo.WithClient(sim.HTTPClient()), // keeps /v3/organizations/me local too
	)
	ctx := context.Background()
	cp, err := sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{Name: "demo"})
	if err != nil {
		panic(err)
	}

	sim.LoseNext("POST", konnectsim.PathServices, 1)
	name := "web"
	_, err = sdk.Services.CreateService(ctx, cp.ControlPlane.ID, components.Service{Name: &name, Host: "web.internal"})

	fmt.Println("error:", err != nil)
	fmt.Println("services stored:", len(sim.ObjectsOf(konnectsim.KindService)))
	fmt.Println("create calls:", sim.Count("POST "+konnectsim.PathServices))
	// Output:
	// error: true
	// services stored: 1
	// create calls: 1
}
