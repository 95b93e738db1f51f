//go:build tools

package tools

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
