package compat

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// Scenario: message traces (WithTrace) of a producer and a push consumer. The Go trace
// dispatcher sends its records only to a trace topic the nameserver already routes (it has no
// auto-creation fallback), so the scenario uses a trace topic of its own, created with the admin
// API, rather than RMQ_SYS_TRACE_TOPIC (a system topic the brokers create only with
// traceTopicEnable=true). Every message gets a Pub record with the region the send answer named
// (MSG_REGION) and SubBefore / SubAfter records with the region the broker stored in the message;
// both are the broker's regionId (DefaultRegion); a 4.9.x broker stores none (gap msgRegion).
func TestTraceProducerConsumer(t *testing.T) {
	ns := namesrv(t)
	t.Parallel()
	topic, group := names("Trace")
	traceTopic := "GoCompatTrace_" + runID()
	plain := newProducer(t, group+"_Plain")
	ctx, cancel := callCtx()
	res, err := plain.SendSync(ctx, primitive.NewMessage(topic, []byte("trace-"+runID()+"-warm")).WithTag("Warm"))
	cancel()
	if !checkSendResult(t, 0, topic, res, err) {
		t.FailNow()
	}
	// the trace topic, with one queue: its reader's pulls are then answered as soon as records arrive
	ad, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver(ns)))
	if err != nil {
		t.Fatalf("NewAdmin: %v", err)
	}
	defer ad.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	err = ad.CreateTopic(ctx, admin.WithTopicCreate(traceTopic), admin.WithBrokerAddrCreate(brokerAddrOf(t, res)),
		admin.WithReadQueueNums(1), admin.WithWriteQueueNums(1))
	cancel()
	if err != nil {
		t.Fatalf("CreateTopic(%s): %v", traceTopic, err)
	}
	awaitRoute(t, traceTopic, routeTimeout)

	traceCfg := func() *primitive.TraceConfig {
		return &primitive.TraceConfig{TraceTopic: traceTopic, Access: primitive.Local, NamesrvAddrs: ns}
	}
	p := newProducer(t, group+"_P", producer.WithTrace(traceCfg()))
	col := newCollector()
	startPushConsumer(t, topic, group, nil, pushOpts{
		model:    consumer.Clustering,
		selector: consumer.MessageSelector{Type: consumer.TAG, Expression: "Traced"},
		handler:  col.handle,
		extra:    []consumer.Option{consumer.WithTrace(traceCfg())},
	})

	const total = 5
	sent := map[string]*primitive.SendResult{}
	for i := 0; i < total; i++ {
		body := fmt.Sprintf("trace-%s-%d", runID(), i)
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(body)).WithTag("Traced").WithKeys([]string{fmt.Sprintf("tk-%d", i)}))
		cancel()
		if !checkSendResult(t, i, topic, res, err) {
			t.FailNow()
		}
		sent[res.MsgID] = res
	}
	started := time.Now()
	if !col.waitFor(t, total, consumeTimeout) {
		t.Fatalf("only %d of %d traced messages consumed within %s", col.count(), total, consumeTimeout)
	}

	// read every record of the trace topic
	queues := awaitRoute(t, traceTopic, routeTimeout)
	pc := startPullConsumer(t, traceTopic, group+"_TraceReader", "trace")
	type record struct{ fields []string }
	var (
		mu      sync.Mutex
		records map[string][]record // "<type> <msgId>" → records
	)
	readAll := func() {
		got := map[string][]record{}
		for _, mq := range queues {
			for off, max := int64(0), int64(1); off < max; {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				r, err := pc.PullFrom(ctx, mq, off, 32)
				cancel()
				if err != nil || r.Status != primitive.PullFound || r.NextBeginOffset <= off {
					break
				}
				for _, m := range primitive.DecodeMessage(r.GetBody()) {
					for _, rec := range strings.Split(string(m.Body), "\x02") {
						f := strings.Split(rec, "\x01")
						var id string
						switch {
						case f[0] == "Pub" && len(f) > 5:
							id = f[5]
						case f[0] == "SubBefore" && len(f) > 5:
							id = f[5]
						case f[0] == "SubAfter" && len(f) > 2:
							id = f[2]
						default:
							continue
						}
						got[f[0]+" "+id] = append(got[f[0]+" "+id], record{f})
					}
				}
				off, max = r.NextBeginOffset, r.MaxOffset
			}
		}
		mu.Lock()
		records = got
		mu.Unlock()
	}
	complete := func() bool {
		readAll()
		mu.Lock()
		defer mu.Unlock()
		for id := range sent {
			for _, kind := range []string{"Pub", "SubBefore", "SubAfter"} {
				if len(records[kind+" "+id]) == 0 {
					return false
				}
			}
		}
		return true
	}
	if !pollUntil(30*time.Second, complete) {
		mu.Lock()
		for id := range sent {
			t.Logf("%s: Pub %d, SubBefore %d, SubAfter %d records", id, len(records["Pub "+id]), len(records["SubBefore "+id]), len(records["SubAfter "+id]))
		}
		mu.Unlock()
		t.Fatalf("not every message has Pub, SubBefore and SubAfter records in %s within 30s", traceTopic)
	}
	t.Logf("all records read %.1fs after the last send", time.Since(started).Seconds())
	// a 4.9.x broker stores no MSG_REGION in messages (5.x does), so there the consume records have none
	noRegion := serverGap(t, "msgRegion")
	mu.Lock()
	defer mu.Unlock()
	for id, res := range sent {
		pub := records["Pub "+id][0].fields
		t.Logf("Pub %q", pub)
		// type, time, region, group, topic, msgId, tags, keys, storeHost, bodyLength, costTime, msgType, offsetMsgId, success
		if len(pub) < 14 {
			t.Errorf("%s: Pub record with %d fields: %q", id, len(pub), pub)
			continue
		}
		if pub[2] != "DefaultRegion" {
			t.Errorf("%s: Pub region %q, want DefaultRegion (the send answer's MSG_REGION)", id, pub[2])
		}
		if pub[4] != topic || pub[6] != "Traced" || pub[12] != res.OffsetMsgID || pub[13] != "true" {
			t.Errorf("%s: Pub record %q: want topic %s, tag Traced, offset id %s, success", id, pub, topic, res.OffsetMsgID)
		}
		before := records["SubBefore "+id][0].fields
		// type, time, region, group, requestId, msgId, retryTimes, keys
		if len(before) < 8 || before[3] != group || before[6] != "0" {
			t.Errorf("%s: SubBefore record %q: want group %s, retry 0", id, before, group)
		} else if before[2] != "DefaultRegion" && !noRegion {
			t.Errorf("%s: SubBefore record %q: want region DefaultRegion (the stored MSG_REGION)", id, before)
		}
		after := records["SubAfter "+id][0].fields
		// type, requestId, msgId, costTime, success, keys, contextCode, time, group
		if len(after) < 9 || after[4] != "true" || after[8] != group {
			t.Errorf("%s: SubAfter record %q: want success, group %s", id, after, group)
		}
	}
}
