package compat

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// Scenario: a producer and a push consumer with a namespace (WithNamespace). The Go client wraps names itself,
// so the broker sees the topic "ns%topic" and the group "ns%group": the topic is auto-created under that name and
// routed, every message arrives, and one the consumer asks to retry comes back (through the retry topic
// "%RETRY%ns%group") with ReconsumeTimes 1.
func TestNamespaceProducerConsumerAndRetry(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Ns")
	ns := "gons_" + runID()
	p := newProducer(t, group+"_P", producer.WithNamespace(ns))

	const total = 12
	const retried = 5
	bodyOf := func(i int) string { return fmt.Sprintf("ns-%s-%02d", runID(), i) }

	var (
		mu         sync.Mutex
		deliveries = map[string][]int32{} // body -> ReconsumeTimes of each delivery
		topics     = map[string]bool{}
		done       = make(chan struct{})
		closed     bool
		allFirst   bool
		from       time.Time
	)
	handler := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		result := consumer.ConsumeSuccess
		for _, m := range msgs {
			b := string(m.Body)
			deliveries[b] = append(deliveries[b], m.ReconsumeTimes)
			if len(deliveries) == total && !allFirst {
				allFirst = true
				t.Logf("every message delivered once, %s after the consumer's start", time.Since(from).Round(time.Millisecond))
			}
			topics[m.Topic] = true
			if b == bodyOf(retried) && len(deliveries[b]) == 1 {
				result = consumer.ConsumeRetryLater
			}
		}
		if !closed && len(deliveries) == total && len(deliveries[bodyOf(retried)]) >= 2 {
			closed = true
			close(done)
		}
		return result, nil
	}

	for i := 0; i < total; i++ {
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(bodyOf(i))).WithTag("ns").WithKeys([]string{fmt.Sprint("nk", i)}))
		cancel()
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send #%d: %v %v", i, res, err)
		}
		if i == 0 {
			t.Logf("send result's queue: %v", res.MessageQueue)
		}
	}
	// The broker holds the wrapped name: a client without a namespace finds its route.
	from = time.Now()
	awaitRoute(t, ns+"%"+topic, routeTimeout)
	t.Logf("route of the wrapped topic found after %s", time.Since(from).Round(time.Millisecond))
	from = time.Now()

	inst := nextInstance("ns")
	startPushConsumer(t, topic, group, nil, pushOpts{
		model:    consumer.Clustering,
		instance: inst,
		handler:  handler,
		extra:    []consumer.Option{consumer.WithNamespace(ns)},
	})
	// The consumer's heartbeat makes the broker create the retry topic under the wrapped group name; the client
	// would see its route only at its next periodic route poll (30 s). Load it now.
	awaitRoute(t, "%RETRY%"+ns+"%"+group, routeTimeout)
	refreshRoutes(t, inst, ns+"%"+topic, group+"_Kick")
	select {
	case <-done:
		t.Logf("all delivered, the retried one twice, %s after the consumer's start", time.Since(from).Round(time.Millisecond))
	case <-time.After(consumeTimeout):
		mu.Lock()
		t.Errorf("after %s: %d of %d bodies, the retried one delivered %d time(s)", consumeTimeout, len(deliveries), total, len(deliveries[bodyOf(retried)]))
		mu.Unlock()
	}

	mu.Lock()
	defer mu.Unlock()
	for i := 0; i < total; i++ {
		got := deliveries[bodyOf(i)]
		switch {
		case i == retried:
			if len(got) < 2 || got[0] != 0 || got[1] != 1 {
				t.Errorf("retried message: ReconsumeTimes of its deliveries %v, want [0 1]", got)
			}
		case len(got) != 1:
			t.Errorf("message %d delivered %d times", i, len(got))
		}
	}
	t.Logf("topics seen by the consumer: %v", topics)
}
