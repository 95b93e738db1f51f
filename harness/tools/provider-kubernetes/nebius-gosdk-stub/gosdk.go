// Package gosdk is a build-time stand-in for github.com/nebius/gosdk, which the Go module proxy refuses to serve.
//
// provider-kubernetes v1.3.1 imports it only in pkg/kube/client/nebius, for the NebiusServiceAccountCredentials
// identity type. This stub keeps exactly the API those files call and fails every constructor, so that identity
// reports an error while kubeconfig and token credentials (what the klutch-kit tests use) are untouched.
package gosdk

import (
	"context"
	"errors"

	"github.com/nebius/gosdk/auth"
)

// ErrNotAvailable is what every call returns.
var ErrNotAvailable = errors.New("Nebius credentials are not available in this build of provider-kubernetes (klutch-kit test stub of github.com/nebius/gosdk)")

// SDK is never constructed.
type SDK struct{}

// Option configures New.
type Option interface{ option() }

// Credentials are what WithCredentials takes.
type Credentials interface{ credentials() }

type credentialsOption struct{ Credentials }

func (credentialsOption) option() {}

type serviceAccount struct{ auth.ServiceAccountReader }

func (serviceAccount) credentials() {}

// New always fails.
func New(context.Context, ...Option) (*SDK, error) { return nil, ErrNotAvailable }

// WithCredentials wraps credentials as an option.
func WithCredentials(c Credentials) Option { return credentialsOption{c} }

// ServiceAccountReader wraps a service account reader as credentials.
func ServiceAccountReader(r auth.ServiceAccountReader) Credentials { return serviceAccount{r} }

// BearerToken always fails.
func (*SDK) BearerToken(context.Context) (auth.BearerToken, error) { return auth.BearerToken{}, ErrNotAvailable }
