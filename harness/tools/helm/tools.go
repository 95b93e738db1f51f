//go:build tools

// Package tools pins helm, the client operators install Crossplane's chart with: the harness renders and installs
// the chart of github.com/crossplane/crossplane/v2 (cluster/charts/crossplane) with it, as the install docs say.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
