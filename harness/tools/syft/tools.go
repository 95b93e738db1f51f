//go:build tools

// Package tools pins syft, which writes the SBOM of each image a release publishes (release/sbom.ts).
package tools

import (
	_ "github.com/anchore/syft/cmd/syft"
)
