// Package compat holds black-box compatibility scenarios for a RocketMQ
// nameserver + broker, driven by the stock Go client
// github.com/apache/rocketmq-client-go/v2.
//
// Everything lives in _test.go files; run them with ./run.sh NAMESRV_ADDR
// (or NAMESRV_ADDR=127.0.0.1:9876 go test ./... -count=1 -v). Without
// NAMESRV_ADDR every scenario is skipped.
package compat
