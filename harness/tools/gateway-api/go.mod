module klutch-kit/tools/gateway-api

go 1.26.7

require sigs.k8s.io/gateway-api v1.6.3
