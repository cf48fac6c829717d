package v1alpha1

// GetAdoptOptions returns spec.adopt of the kinds of upstreams, TLS material, keys and vaults (the entity reconciler
// adopts through it).

// GetAdoptOptions returns spec.adopt.
func (o *KongUpstream) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongTarget) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongCertificate) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongCACertificate) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongSNI) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongDataPlaneClientCertificate) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongKey) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongKeySet) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }

// GetAdoptOptions returns spec.adopt.
func (o *KongVault) GetAdoptOptions() *AdoptOptions { return o.Spec.Adopt }
