package platform_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
	"github.com/Kong/sdk-konnect-go/models/sdkerrors"

	"github.com/almproject/alm/test/konnectsim"
	"github.com/almproject/alm/test/konnectsim/internal/simtest"
)

func TestGroupMemberships(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	groupType := components.CreateControlPlaneRequestClusterTypeClusterTypeControlPlaneGroup
	res, err := sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{Name: "group", ClusterType: &groupType})
	if err != nil {
		t.Fatal(err)
	}
	group := res.ControlPlane.ID
	var members []string
	for _, name := range []string{"cp-a", "cp-b", "cp-c"} {
		members = append(members, simtest.CreateControlPlane(t, sdk, name, nil).ID)
	}
	plain := members[0]
	put := func(id string, ids ...string) error {
		m := make([]components.Members, len(ids))
		for i, id := range ids {
			m[i] = components.Members{ID: id}
		}
		_, err := sdk.ControlPlaneGroups.PutControlPlanesIDGroupMemberships(ctx, id, &components.GroupMembership{Members: m})
		return err
	}
	list := func(size int64) []string {
		t.Helper()
		var ids []string
		var after *string
		for pages := 0; pages < 10; pages++ {
			res, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberships(ctx, operations.GetControlPlanesIDGroupMembershipsRequest{ControlPlaneID: group, PageSize: &size, PageAfter: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, cp := range res.ListGroupMemberships.Data {
				ids = append(ids, cp.ID)
			}
			if total := res.ListGroupMemberships.Meta.Page.Total; total == nil || int(*total) != len(s.GroupMembers(group)) {
				t.Errorf("meta.page.total = %v", total)
			}
			next := res.ListGroupMemberships.Meta.Page.Next
			if next == nil {
				return ids
			}
			after = simtest.Ptr(mustQuery(t, *next, "page[after]"))
		}
		t.Fatal("no last page")
		return nil
	}

	if err := put(group, members...); err != nil {
		t.Fatal(err)
	}
	if got := list(2); !slices.Equal(got, members) {
		t.Errorf("members over pages of 2 = %v, want %v", got, members)
	}
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsRemove(ctx, group, &components.GroupMembership{Members: []components.Members{{ID: members[1]}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, group, &components.GroupMembership{Members: []components.Members{{ID: members[1]}, {ID: members[0]}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := s.GroupMembers(group), []string{members[0], members[2], members[1]}; !slices.Equal(got, want) {
		t.Errorf("after remove and add: %v, want %v", got, want)
	}
	status, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberStatus(ctx, members[2])
	if err != nil || status.GroupMemberStatus == nil || !status.GroupMemberStatus.IsMember {
		t.Errorf("member status of a member: %+v, %v", status, err)
	}

	// What Konnect refuses.
	for name, tc := range map[string]struct {
		group string
		ids   []string
		want  int
	}{
		"not a group":         {plain, []string{members[1]}, http.StatusBadRequest},
		"unknown group":       {"00000000-0000-4000-8000-000000000000", nil, http.StatusNotFound},
		"unknown member":      {group, []string{"00000000-0000-4000-8000-000000000000"}, http.StatusBadRequest},
		"a group as a member": {group, []string{group}, http.StatusBadRequest},
	} {
		if err := put(tc.group, tc.ids...); simtest.SDKStatus(err) != tc.want {
			t.Errorf("%s: error %v, want HTTP %d", name, err, tc.want)
		}
	}

	// A deleted control plane leaves every group.
	if _, err := sdk.ControlPlanes.DeleteControlPlane(ctx, members[2]); err != nil {
		t.Fatal(err)
	}
	if got := list(10); !slices.Equal(got, []string{members[0], members[1]}) {
		t.Errorf("after deleting a member: %v", got)
	}
}

// mustQuery reads a query parameter of a next-page link.
func mustQuery(t testing.TB, link, key string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Query().Get(key) == "" {
		t.Fatalf("next link %q has no %s", link, key)
	}
	return u.Query().Get(key)
}

// createGroup creates a control plane group.
func createGroup(t testing.TB, sdk *sdkkonnectgo.SDK, name string) string {
	t.Helper()
	groupType := components.CreateControlPlaneRequestClusterTypeClusterTypeControlPlaneGroup
	res, err := sdk.ControlPlanes.CreateControlPlane(context.Background(), components.CreateControlPlaneRequest{Name: name, ClusterType: &groupType})
	if err != nil {
		t.Fatalf("CreateControlPlane(%s): %v", name, err)
	}
	return res.ControlPlane.ID
}

func membership(ids ...string) *components.GroupMembership {
	m := make([]components.Members, len(ids))
	for i, id := range ids {
		m[i] = components.Members{ID: id}
	}
	return &components.GroupMembership{Members: m}
}

func TestGroupMembershipRules(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	g1, g2 := createGroup(t, sdk, "g1"), createGroup(t, sdk, "g2")
	a, b, c := simtest.CreateControlPlane(t, sdk, "cp-a", nil).ID, simtest.CreateControlPlane(t, sdk, "cp-b", nil).ID, simtest.CreateControlPlane(t, sdk, "cp-c", nil).ID
	unknown := "00000000-0000-4000-8000-000000000000"
	s.AddOrganization(konnectsim.Organization{Name: "Other", Tokens: []string{"kpat_other"}})
	otherOrg := simtest.CreateControlPlane(t, simtest.NewSDK(s, "kpat_other"), "elsewhere", nil).ID

	// An empty group lists nothing.
	res, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberships(ctx, operations.GetControlPlanesIDGroupMembershipsRequest{ControlPlaneID: g1})
	if err != nil {
		t.Fatal(err)
	}
	if page := res.ListGroupMemberships.Meta.Page; len(res.ListGroupMemberships.Data) != 0 || page.Next != nil || page.Total == nil || *page.Total != 0 || page.Size != 10 {
		t.Fatalf("members of an empty group: %+v", res.ListGroupMemberships)
	}
	if res, err := sdk.ControlPlaneGroups.PutControlPlanesIDGroupMemberships(ctx, g1, membership(a, b)); err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT members: %+v, %v", res, err)
	}
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, g2, membership(a)); err != nil {
		t.Fatal(err)
	}

	// Refusals leave the members as they were, and name the offending id.
	for _, tc := range []struct {
		name  string
		call  func() error
		field string // of the 400's invalid_parameters, when it has one
		want  int
		id    string // the id the reason names
	}{
		{"PUT with an unknown member", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.PutControlPlanesIDGroupMemberships(ctx, g1, membership(c, unknown)))
		}, "members[1].id", 400, unknown},
		{"PUT with another organization's control plane", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.PutControlPlanesIDGroupMemberships(ctx, g1, membership(otherOrg)))
		}, "members[0].id", 400, otherOrg},
		{"adding a group", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, g1, membership(g2)))
		}, "members[0].id", 400, g2},
		{"removing an unknown control plane", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsRemove(ctx, g1, membership(unknown)))
		}, "members[0].id", 400, unknown},
		{"adding to a control plane that is not a group", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, c, membership(a)))
		}, "", 400, ""},
		{"listing the members of a control plane that is not a group", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberships(ctx, operations.GetControlPlanesIDGroupMembershipsRequest{ControlPlaneID: c}))
		}, "", 400, ""},
		{"page size above 100", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberships(ctx, operations.GetControlPlanesIDGroupMembershipsRequest{ControlPlaneID: g1, PageSize: simtest.Ptr(int64(101))}))
		}, "page[size]", 400, ""},
		{"a cursor that is not one", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberships(ctx, operations.GetControlPlanesIDGroupMembershipsRequest{ControlPlaneID: g1, PageAfter: simtest.Ptr("!")}))
		}, "page[after]", 400, ""},
		{"removing from an unknown group", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsRemove(ctx, unknown, membership(a)))
		}, "", 404, ""},
		{"member status of an unknown control plane", func() error {
			return simtest.Err(sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberStatus(ctx, unknown))
		}, "", 404, ""},
		{"another organization's group", func() error { return simtest.Err(sdk.ControlPlaneGroups.GetControlPlanesIDGroupStatus(ctx, otherOrg)) }, "", 404, ""},
	} {
		err := tc.call()
		var bad *sdkerrors.BadRequestError
		var notFound *sdkerrors.NotFoundError
		switch {
		case tc.want == 404 && !errors.As(err, &notFound):
			t.Errorf("%s: %v, want a NotFoundError", tc.name, err)
		case tc.want == 400 && !errors.As(err, &bad):
			t.Errorf("%s: %v, want a BadRequestError", tc.name, err)
		case tc.field != "" && (len(bad.InvalidParameters) != 1 || bad.InvalidParameters[0].InvalidParameterStandard == nil ||
			bad.InvalidParameters[0].InvalidParameterStandard.Field != tc.field):
			t.Errorf("%s: invalid_parameters %+v, want one on %s", tc.name, bad.InvalidParameters, tc.field)
		case tc.id != "" && !strings.Contains(bad.InvalidParameters[0].InvalidParameterStandard.Reason, tc.id):
			t.Errorf("%s: reason %q does not name %s", tc.name, bad.InvalidParameters[0].InvalidParameterStandard.Reason, tc.id)
		}
	}
	if got := s.GroupMembers(g1); !slices.Equal(got, []string{a, b}) {
		t.Errorf("members after refused changes: %v", got)
	}

	// Removing a control plane that is no member changes nothing; adding a member twice neither.
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsRemove(ctx, g1, membership(c)); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, g1, membership(b, b)); err != nil {
		t.Fatal(err)
	}
	if got := s.GroupMembers(g1); !slices.Equal(got, []string{a, b}) {
		t.Errorf("members = %v, want [a b]", got)
	}
	for id, want := range map[string]bool{a: true, c: false} {
		if st, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberStatus(ctx, id); err != nil || st.GroupMemberStatus.IsMember != want {
			t.Errorf("member status of %s: %+v, %v, want %v", id, st, err, want)
		}
	}

	// A control plane in two groups leaves both when it is deleted, through the API or out of band.
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, g2, membership(b)); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.ControlPlanes.DeleteControlPlane(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(b); err != nil {
		t.Fatal(err)
	}
	if g1m, g2m := s.GroupMembers(g1), s.GroupMembers(g2); len(g1m) != 0 || len(g2m) != 0 {
		t.Errorf("members left after deleting them: %v, %v", g1m, g2m)
	}
	if s.GroupMembers(unknown) != nil {
		t.Error("GroupMembers of an unknown group is not nil")
	}
	// A lost answer still commits.
	s.LoseNext("POST", konnectsim.PathGroupMembershipsAdd, 1)
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, g1, membership(c)); simtest.SDKStatus(err) != http.StatusBadGateway || !slices.Equal(s.GroupMembers(g1), []string{c}) {
		t.Errorf("lost add: %v, members %v", err, s.GroupMembers(g1))
	}
	if n := s.Count("PUT " + konnectsim.PathGroupMemberships); n != 3 {
		t.Errorf("PUT %s counted %d times, want 3", konnectsim.PathGroupMemberships, n)
	}
}

func TestGroupStatus(t *testing.T) {
	s := konnectsim.StartTest(t, konnectsim.Options{})
	sdk := simtest.NewSDK(s, konnectsim.DefaultToken)
	ctx := context.Background()
	group := createGroup(t, sdk, "group")
	a, b := simtest.CreateControlPlane(t, sdk, "cp-a", nil).ID, simtest.CreateControlPlane(t, sdk, "cp-b", nil).ID
	simtest.CreateService(t, sdk, a, "web")
	simtest.CreateService(t, sdk, a, "api")
	web := simtest.CreateService(t, sdk, b, "web")
	status := func() *components.GroupStatus {
		t.Helper()
		res, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupStatus(ctx, group)
		if err != nil || res.GetGroupStatus == nil || res.GetGroupStatus.Item == nil {
			t.Fatalf("group status: %+v, %v", res, err)
		}
		return res.GetGroupStatus.Item
	}
	if st := status(); st.State != components.GroupStatusStateOk || len(st.Conflicts) != 0 || st.ID != group || st.CreatedAt.IsZero() {
		t.Errorf("status of an empty group: %+v", st)
	}
	if _, err := sdk.ControlPlaneGroups.PutControlPlanesIDGroupMemberships(ctx, group, membership(a, b)); err != nil {
		t.Fatal(err)
	}
	st := status()
	if st.State != components.GroupStatusStateConflict || len(st.Conflicts) != 1 {
		t.Fatalf("status with two services named web: %+v", st)
	}
	if cf := st.Conflicts[0]; cf.ClusterID != b || cf.Resource.ID != *web.ID || cf.Resource.Type != "service" || !strings.Contains(cf.Description, "Name=web") {
		t.Errorf("conflict = %+v", cf)
	}
	if _, err := sdk.Services.DeleteService(ctx, b, *web.ID); err != nil {
		t.Fatal(err)
	}
	if st := status(); st.State != components.GroupStatusStateOk {
		t.Errorf("status once the duplicate is gone: %+v", st)
	}
	if _, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupStatus(ctx, a); simtest.SDKStatus(err) != http.StatusBadRequest {
		t.Errorf("status of a control plane that is not a group: %v, want 400", err)
	}
	if n := s.Count("GET " + konnectsim.PathGroupStatus); n != 4 {
		t.Errorf("GET %s counted %d times, want 4", konnectsim.PathGroupStatus, n)
	}
}
