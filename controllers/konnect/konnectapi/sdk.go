package konnectapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"

	sdkkonnectgo "github.com/Kong/sdk-konnect-go"
	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
)

const (
	// entityPageSize is the page size of gateway entity lists (Konnect's maximum).
	entityPageSize = 1000
	// controlPlanePageSize is the page size of control plane lists (Konnect's maximum).
	controlPlanePageSize = 100
)

// sdkAPI implements API with Kong's Konnect SDK.
type sdkAPI struct {
	sdk       *sdkkonnectgo.SDK
	serverURL string
}

// newSDKAPI returns an API talking to serverURL (already normalised) with token, sending every request through gate.
func newSDKAPI(serverURL, token string, gate *orgGate, base *http.Client) API {
	doer := &gatedDoer{base: base, gate: gate}
	if u, err := url.Parse(serverURL); err == nil && !isKonnectHost(u.Hostname()) {
		doer.pin = u
	}
	return &sdkAPI{serverURL: serverURL, sdk: sdkkonnectgo.New(
		sdkkonnectgo.WithServerURL(serverURL),
		sdkkonnectgo.WithSecurity(components.Security{PersonalAccessToken: &token}),
		sdkkonnectgo.WithClient(doer),
	)}
}

// call runs f, one API call named op ("<verb> <entity type>", e.g. "create service"), with a context that carries
// the status code back and labels its HTTP requests' metrics; a failure becomes an *APIError with the status code.
func (a *sdkAPI) call(ctx context.Context, op string, f func(ctx context.Context) error) error {
	code := &atomic.Int32{}
	ctx = context.WithValue(ctx, statusKey{}, code)
	err := f(context.WithValue(ctx, requestKey{}, a.requestInfo(ctx, op)))
	if err == nil {
		return nil
	}
	if c := int(code.Load()); c >= 300 {
		return &APIError{StatusCode: c, Op: op, Err: err}
	}
	return fmt.Errorf("konnect %s: %w", op, err)
}

func (a *sdkAPI) OrganizationID(ctx context.Context) (string, error) {
	var id string
	err := a.call(ctx, "get organization", func(ctx context.Context) error {
		resp, err := a.sdk.Me.GetOrganizationsMe(ctx)
		if err != nil {
			return err
		}
		if resp.MeOrganization == nil || resp.MeOrganization.ID == nil {
			return fmt.Errorf("no organization in the answer")
		}
		id = *resp.MeOrganization.ID
		return nil
	})
	return id, err
}

func (a *sdkAPI) Create(ctx context.Context, t EntityType, cpID string, body map[string]any) (Entity, error) {
	var out any
	err := a.call(ctx, "create "+string(t), func(ctx context.Context) (err error) {
		switch t {
		case TypeControlPlane:
			out, err = send(body, as[components.CreateControlPlaneRequest], func(r components.CreateControlPlaneRequest) (any, error) {
				resp, err := a.sdk.ControlPlanes.CreateControlPlane(ctx, r)
				return field(resp, err, func() any { return resp.ControlPlane })
			})
		case TypeService:
			out, err = send(body, as[components.Service], func(r components.Service) (any, error) {
				resp, err := a.sdk.Services.CreateService(ctx, cpID, r)
				return field(resp, err, func() any { return resp.Service })
			})
		case TypeRoute:
			out, err = send(body, routeFromMap, func(r components.Route) (any, error) {
				resp, err := a.sdk.Routes.CreateRoute(ctx, cpID, r)
				return field(resp, err, func() any { return routeJSON(resp.Route) })
			})
		case TypeConsumer:
			out, err = send(body, as[components.Consumer], func(r components.Consumer) (any, error) {
				resp, err := a.sdk.Consumers.CreateConsumer(ctx, cpID, r)
				return field(resp, err, func() any { return resp.Consumer })
			})
		case TypeConsumerGroup:
			out, err = send(body, as[components.ConsumerGroup], func(r components.ConsumerGroup) (any, error) {
				resp, err := a.sdk.ConsumerGroups.CreateConsumerGroup(ctx, cpID, r)
				return field(resp, err, func() any { return resp.ConsumerGroup })
			})
		case TypePlugin:
			out, err = send(body, as[components.Plugin], func(r components.Plugin) (any, error) {
				resp, err := a.sdk.Plugins.CreatePlugin(ctx, cpID, r)
				return field(resp, err, func() any { return resp.Plugin })
			})
		default:
			out, err = a.createGateway(ctx, t, cpID, body)
		}
		return err
	})
	if err != nil {
		return Entity{}, err
	}
	return answered(t, out)
}

// answered turns the entity an SDK call returned into an Entity, failing when the answer held none.
func answered(t EntityType, v any) (Entity, error) {
	if v == nil || reflect.ValueOf(v).IsNil() {
		return Entity{}, fmt.Errorf("konnect: no %s in the answer", t)
	}
	e, err := toEntity(v)
	if err == nil && e.ID == "" {
		err = fmt.Errorf("konnect: the %s in the answer has no id", t)
	}
	return e, err
}

func (a *sdkAPI) Update(ctx context.Context, t EntityType, cpID, id string, body map[string]any) (Entity, error) {
	var out any
	err := a.call(ctx, "update "+string(t), func(ctx context.Context) (err error) {
		switch t {
		case TypeControlPlane:
			out, err = send(body, as[components.UpdateControlPlaneRequest], func(r components.UpdateControlPlaneRequest) (any, error) {
				resp, err := a.sdk.ControlPlanes.UpdateControlPlane(ctx, id, r)
				return field(resp, err, func() any { return resp.ControlPlane })
			})
		case TypeService:
			out, err = send(body, as[components.Service], func(r components.Service) (any, error) {
				resp, err := a.sdk.Services.UpsertService(ctx, operations.UpsertServiceRequest{ControlPlaneID: cpID, ServiceID: id, Service: r})
				return field(resp, err, func() any { return resp.Service })
			})
		case TypeRoute:
			out, err = send(body, routeFromMap, func(r components.Route) (any, error) {
				resp, err := a.sdk.Routes.UpsertRoute(ctx, operations.UpsertRouteRequest{ControlPlaneID: cpID, RouteID: id, Route: r})
				return field(resp, err, func() any { return routeJSON(resp.Route) })
			})
		case TypeConsumer:
			out, err = send(body, as[components.Consumer], func(r components.Consumer) (any, error) {
				resp, err := a.sdk.Consumers.UpsertConsumer(ctx, operations.UpsertConsumerRequest{ControlPlaneID: cpID, ConsumerID: id, Consumer: r})
				return field(resp, err, func() any { return resp.Consumer })
			})
		case TypeConsumerGroup:
			out, err = send(body, as[components.ConsumerGroup], func(r components.ConsumerGroup) (any, error) {
				resp, err := a.sdk.ConsumerGroups.UpsertConsumerGroup(ctx, operations.UpsertConsumerGroupRequest{ControlPlaneID: cpID, ConsumerGroupID: id, ConsumerGroup: r})
				return field(resp, err, func() any { return resp.ConsumerGroup })
			})
		case TypePlugin:
			out, err = send(body, as[components.Plugin], func(r components.Plugin) (any, error) {
				resp, err := a.sdk.Plugins.UpsertPlugin(ctx, operations.UpsertPluginRequest{ControlPlaneID: cpID, PluginID: id, Plugin: r})
				return field(resp, err, func() any { return resp.Plugin })
			})
		default:
			out, err = a.updateGateway(ctx, t, cpID, id, body)
		}
		return err
	})
	if err != nil {
		return Entity{}, err
	}
	return answered(t, out)
}

// send decodes body into the request of one SDK call and makes the call, which returns the entity answered.
func send[Req any](body map[string]any, decode func(map[string]any) (Req, error), call func(Req) (any, error)) (any, error) {
	req, err := decode(body)
	if err != nil {
		return nil, err
	}
	return call(req)
}

// as decodes a JSON body into a request type of the SDK.
func as[Req any](body map[string]any) (Req, error) {
	var req Req
	return req, fromMap(body, &req)
}

// field returns the entity of an SDK answer (get reads it from resp), or the call's error.
func field[Resp any](resp *Resp, err error, get func() any) (any, error) {
	if err != nil || resp == nil {
		return nil, err
	}
	return get(), nil
}

// routeJSON is the JSON form of a route in an answer, or nil.
func routeJSON(r *components.Route) any {
	if r == nil {
		return nil
	}
	return r.RouteJSON
}

func (a *sdkAPI) GetControlPlane(ctx context.Context, id string) (Entity, error) {
	var out any
	err := a.call(ctx, "get control plane", func(ctx context.Context) error {
		resp, err := a.sdk.ControlPlanes.GetControlPlane(ctx, id)
		if err != nil {
			return err
		}
		out = resp.ControlPlane
		return nil
	})
	if err != nil {
		return Entity{}, err
	}
	return answered(TypeControlPlane, out)
}

func (a *sdkAPI) GroupMembers(ctx context.Context, groupID string) ([]string, error) {
	var ids []string
	err := a.call(ctx, "list control plane group members", func(ctx context.Context) error {
		var after *string
		for {
			resp, err := a.sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberships(ctx, operations.GetControlPlanesIDGroupMembershipsRequest{
				ControlPlaneID: groupID, PageSize: sdkkonnectgo.Int64(controlPlanePageSize), PageAfter: after,
			})
			if err != nil {
				return err
			}
			if resp.ListGroupMemberships == nil {
				return nil
			}
			for _, cp := range resp.ListGroupMemberships.Data {
				ids = append(ids, cp.ID)
			}
			after = nextCursor(resp.ListGroupMemberships.Meta.Page.Next)
			if after == nil || len(resp.ListGroupMemberships.Data) == 0 {
				return nil
			}
		}
	})
	return ids, err
}

// nextCursor reads the cursor of the next page from meta.page.next, which Konnect gives either as the cursor or as
// the URL of the next page (with page[after]); nil means there is no next page.
func nextCursor(next *string) *string {
	if next == nil || *next == "" {
		return nil
	}
	if u, err := url.Parse(*next); err == nil {
		if c := u.Query().Get("page[after]"); c != "" {
			return &c
		}
	}
	return next
}

func (a *sdkAPI) SetGroupMembers(ctx context.Context, groupID string, ids []string) error {
	members := make([]components.Members, len(ids))
	for i, id := range ids {
		members[i] = components.Members{ID: id}
	}
	return a.call(ctx, "set control plane group members", func(ctx context.Context) error {
		_, err := a.sdk.ControlPlaneGroups.PutControlPlanesIDGroupMemberships(ctx, groupID, &components.GroupMembership{Members: members})
		return err
	})
}

func (a *sdkAPI) Delete(ctx context.Context, t EntityType, cpID, id string) error {
	return a.call(ctx, "delete "+string(t), func(ctx context.Context) error {
		var err error
		switch t {
		case TypeControlPlane:
			_, err = a.sdk.ControlPlanes.DeleteControlPlane(ctx, id)
		case TypeService:
			_, err = a.sdk.Services.DeleteService(ctx, cpID, id)
		case TypeRoute:
			_, err = a.sdk.Routes.DeleteRoute(ctx, cpID, id)
		case TypeConsumer:
			_, err = a.sdk.Consumers.DeleteConsumer(ctx, cpID, id)
		case TypeConsumerGroup:
			_, err = a.sdk.ConsumerGroups.DeleteConsumerGroup(ctx, cpID, id)
		case TypePlugin:
			_, err = a.sdk.Plugins.DeletePlugin(ctx, cpID, id)
		default:
			err = a.deleteGateway(ctx, t, cpID, id)
		}
		return err
	})
}

func (a *sdkAPI) List(ctx context.Context, t EntityType, cpID, tag string) ([]Entity, error) {
	var out []Entity
	err := a.call(ctx, "list "+string(t), func(ctx context.Context) error {
		if t == TypeControlPlane {
			return a.listControlPlanes(ctx, tag, &out)
		}
		var err error
		out, err = allPages(tag, func(size int64, tags, offset *string) ([]any, *string, error) {
			return a.listPage(ctx, t, cpID, size, tags, offset)
		})
		return err
	})
	return out, err
}

// allPages reads every page of a core entity list filtered by tag ("" for none), following the offsets.
func allPages(tag string, page func(size int64, tags, offset *string) ([]any, *string, error)) ([]Entity, error) {
	var tags, offset *string
	if tag != "" {
		tags = &tag
	}
	var out []Entity
	for {
		items, next, err := page(entityPageSize, tags, offset)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			e, err := toEntity(item)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		if next == nil || *next == "" {
			return out, nil
		}
		offset = next
	}
}

// listPage reads one page of gateway entities; next is the offset of the following page ("" or nil at the end).
func (a *sdkAPI) listPage(ctx context.Context, t EntityType, cpID string, size int64, tags, offset *string) ([]any, *string, error) {
	switch t {
	case TypeService:
		resp, err := a.sdk.Services.ListService(ctx, operations.ListServiceRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case TypeRoute:
		resp, err := a.sdk.Routes.ListRoute(ctx, operations.ListRouteRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case TypeConsumer:
		resp, err := a.sdk.Consumers.ListConsumer(ctx, operations.ListConsumerRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case TypeConsumerGroup:
		resp, err := a.sdk.ConsumerGroups.ListConsumerGroup(ctx, operations.ListConsumerGroupRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	case TypePlugin:
		resp, err := a.sdk.Plugins.ListPlugin(ctx, operations.ListPluginRequest{ControlPlaneID: cpID, Size: &size, Tags: tags, Offset: offset})
		if err != nil || resp.Object == nil {
			return nil, nil, err
		}
		return anyPage(resp.Object.Data, resp.Object.Offset)
	}
	return a.listGatewayPage(ctx, t, cpID, size, tags, offset)
}

func (a *sdkAPI) listControlPlanes(ctx context.Context, label string, out *[]Entity) error {
	for page := int64(1); ; page++ {
		req := operations.ListControlPlanesRequest{PageSize: sdkkonnectgo.Int64(controlPlanePageSize), PageNumber: sdkkonnectgo.Int64(page)}
		if label != "" {
			req.FilterLabels = &label
		}
		resp, err := a.sdk.ControlPlanes.ListControlPlanes(ctx, req)
		if err != nil {
			return err
		}
		if resp.ListControlPlanesResponse == nil {
			return nil
		}
		for _, cp := range resp.ListControlPlanesResponse.Data {
			e, err := toEntity(cp)
			if err != nil {
				return err
			}
			*out = append(*out, e)
		}
		total := int64(resp.ListControlPlanesResponse.Meta.Page.Total)
		if len(resp.ListControlPlanesResponse.Data) < controlPlanePageSize || page*controlPlanePageSize >= total {
			return nil
		}
	}
}

// toEntity decodes an SDK model into an Entity through its JSON form.
func toEntity(v any) (Entity, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Entity{}, err
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		return Entity{}, err
	}
	id, _ := body["id"].(string)
	return Entity{ID: id, Body: body}, nil
}

// fromMap converts a Konnect JSON body into an SDK request model.
func fromMap(body map[string]any, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

func routeFromMap(body map[string]any) (components.Route, error) {
	var rj components.RouteJSON
	if err := fromMap(body, &rj); err != nil {
		return components.Route{}, err
	}
	return components.CreateRouteRouteJSON(rj), nil
}

// anyPage turns one page of SDK models into items for toEntity, with the offset of the next page.
func anyPage[T any](data []T, next *string) ([]any, *string, error) {
	items := make([]any, len(data))
	for i := range data {
		items[i] = data[i]
	}
	return items, next, nil
}

// requestInfo labels the requests of the call op: its verb is the operation (unless WithOperation overrides it),
// the rest the entity type, in snake case ("control plane" -> control_plane; credentials by their type, e.g.
// basic-auth_credential).
func (a *sdkAPI) requestInfo(ctx context.Context, op string) requestInfo {
	verb, entity, _ := strings.Cut(op, " ")
	if o, ok := ctx.Value(operationKey{}).(string); ok && o != "" {
		verb = o
	}
	entity = strings.ReplaceAll(strings.TrimSuffix(entity, "s"), " ", "_")
	return requestInfo{serverURL: a.serverURL, operation: verb, entityType: entity}
}
