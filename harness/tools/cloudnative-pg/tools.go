//go:build tools

package tools

import _ "github.com/cloudnative-pg/cloudnative-pg/cmd/manager"
