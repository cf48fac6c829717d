package kinds

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configurationv1 "github.com/almproject/alm/apis/configuration/v1"
	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
	konnectv1alpha1 "github.com/almproject/alm/apis/konnect/v1alpha1"
	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/kinds/kindbase"
)

// A KongPlugin is not a Konnect entity: it is the configuration a KongPluginBinding applies. pluginConfig is what a
// binding reads of it (Refs.Found).
type pluginConfig struct {
	// body is the plugin's Konnect body without tags and scope.
	body map[string]any
	// secret names the Secret the configuration was read from, with its resourceVersion: hashed in place of the
	// configuration, so no hash of a secret value is written to the status.
	secret string
}

// kindKongPlugin is the only pluginRef kind this operator applies.
const kindKongPlugin = "KongPlugin"

// resolvePlugin reads the binding's KongPlugin (and the Secret of its configFrom) into the check of
// KongPluginRefValid. A Secret's values never appear in a message.
func resolvePlugin(ctx context.Context, c client.Reader, b *configurationv1alpha1.KongPluginBinding) (*pluginConfig, entity.RefCheck, error) {
	check := entity.RefCheck{Type: konnectv1alpha1.ConditionKongPluginRefValid}
	ref := b.Spec.PluginReference
	if ref.Kind != nil && *ref.Kind != kindKongPlugin {
		check.Reason = konnectv1alpha1.ReasonUnsupported
		check.Message = fmt.Sprintf("pluginRef kind %s is not supported: this operator applies KongPlugins", *ref.Kind)
		return nil, check, nil
	}
	kp := &configurationv1.KongPlugin{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: ref.Name}, kp); err != nil {
		if apierrors.IsNotFound(err) {
			check.Message = fmt.Sprintf("KongPlugin %s/%s not found", b.Namespace, ref.Name)
			return nil, check, nil
		}
		return nil, check, err
	}
	if !kp.DeletionTimestamp.IsZero() {
		check.Message = fmt.Sprintf("KongPlugin %s/%s is being deleted", b.Namespace, ref.Name)
		return nil, check, nil
	}
	config, secret, problem, err := readPluginConfig(ctx, c, kp)
	if err != nil || problem != "" {
		check.Message = problem
		return nil, check, err
	}
	check.OK, check.Message = true, fmt.Sprintf("KongPlugin %s/%s (%s) is usable", b.Namespace, ref.Name, kp.PluginName)
	return &pluginConfig{body: pluginBody(kp, config), secret: secret}, check, nil
}

// readPluginConfig returns the plugin's configuration: config, or the object read from configFrom's Secret key (with
// the Secret's name and version), or what is wrong with it.
func readPluginConfig(ctx context.Context, c client.Reader, kp *configurationv1.KongPlugin) (map[string]any, string, string, error) {
	if kp.ConfigFrom == nil {
		config, ok := decodeObject(kp.Config.Raw)
		if !ok {
			return nil, "", fmt.Sprintf("KongPlugin %s/%s: config is not an object", kp.Namespace, kp.Name), nil
		}
		return config, "", "", nil
	}
	ref := kp.ConfigFrom.SecretValue
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: kp.Namespace, Name: ref.Secret}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", fmt.Sprintf("KongPlugin %s/%s: configFrom Secret %s not found", kp.Namespace, kp.Name, ref.Secret), nil
		}
		return nil, "", "", err
	}
	raw, ok := s.Data[ref.Key]
	if !ok {
		return nil, "", fmt.Sprintf("KongPlugin %s/%s: configFrom Secret %s has no key %q", kp.Namespace, kp.Name, ref.Secret, ref.Key), nil
	}
	config, ok := decodeObject(raw)
	if !ok {
		// The decoder's error would quote the value: it is not passed on.
		return nil, "", fmt.Sprintf("KongPlugin %s/%s: configFrom Secret %s key %q is not a JSON or YAML object", kp.Namespace, kp.Name, ref.Secret, ref.Key), nil
	}
	return config, ref.Secret + "@" + s.ResourceVersion, "", nil
}

// decodeObject decodes a JSON or YAML object (empty input is an empty object); ok is false for anything else.
func decodeObject(raw []byte) (map[string]any, bool) {
	config := map[string]any{}
	if len(raw) == 0 {
		return config, true
	}
	return config, yaml.Unmarshal(raw, &config) == nil
}

// pluginBody is the Konnect body of a KongPlugin with its configuration.
func pluginBody(kp *configurationv1.KongPlugin, config map[string]any) map[string]any {
	body := map[string]any{"name": kp.PluginName, "config": config, "enabled": !kp.Disabled}
	if kp.InstanceName != "" {
		body["instance_name"] = kp.InstanceName
	}
	if len(kp.Protocols) > 0 {
		protocols := make([]any, len(kp.Protocols))
		for i, p := range kp.Protocols {
			protocols[i] = string(p)
		}
		body["protocols"] = protocols
	}
	if o := kp.Ordering; o != nil && (len(o.Before) > 0 || len(o.After) > 0) {
		ordering, _ := kindbase.BodyOf(o)
		body["ordering"] = ordering
	}
	return body
}

// hashedPlugin is the body hashed for a plugin: a configuration read from a Secret is replaced by the Secret's name
// and version.
func hashedPlugin(refs entity.Refs, desired map[string]any) map[string]any {
	pc, ok := refs.Found.(*pluginConfig)
	if !ok || pc.secret == "" {
		return desired
	}
	out := make(map[string]any, len(desired))
	for k, v := range desired {
		out[k] = v
	}
	out["config"] = map[string]any{"fromSecret": pc.secret}
	return out
}
