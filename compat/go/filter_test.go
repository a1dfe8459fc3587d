package compat

import (
	"context"
	"fmt"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// Scenario 5: TAG selector "A || C" delivers only A and C. The push consumer re-filters
// on the client side, so the broker-side filter is checked separately with the raw
// body of pull responses.
func TestTagFilterSelector(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Tag")
	p := newProducer(t, group+"_P")

	tags := []string{"A", "B", "C", "B", "D"}
	const total = 40
	var want []expected
	maxOff := map[int]int64{} // queueId -> next offset after our sends
	bname := ""
	for i := 0; i < total; i++ {
		tag := tags[i%len(tags)]
		body := []byte(fmt.Sprintf("tag-%s-%s-%03d", runID(), tag, i))
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, body).WithTag(tag).WithKeys([]string{fmt.Sprint("t", i)}))
		cancel()
		if !checkSendResult(t, i, topic, res, err) {
			t.FailNow()
		}
		bname = res.MessageQueue.BrokerName
		if res.QueueOffset+1 > maxOff[res.MessageQueue.QueueId] {
			maxOff[res.MessageQueue.QueueId] = res.QueueOffset + 1
		}
		if tag == "A" || tag == "C" {
			want = append(want, expected{body: body, tag: tag, keys: fmt.Sprint("t", i)})
		}
	}

	sel := consumer.MessageSelector{Type: consumer.TAG, Expression: "A || C"}
	col := newCollector()
	startPushConsumer(t, topic, group, col, pushOpts{selector: sel, model: consumer.Clustering})
	if !col.waitFor(t, len(want), consumeTimeout) {
		t.Errorf("only %d of %d A/C messages consumed within %s", col.count(), len(want), consumeTimeout)
	}
	// wait a bit longer so that wrongly delivered B/D messages would show up
	checkReceived(t, want, col.settle(1500*time.Millisecond), topic)

	// Broker-side filtering: pull every queue up to our last offset and inspect the
	// messages the broker actually returned (PullResult body, before client re-filtering).
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNameServer(namesrv(t)),
		consumer.WithGroupName(group+"_Pull"),
		consumer.WithInstance(nextInstance("pull")),
	)
	if err != nil {
		t.Fatalf("NewPullConsumer: %v", err)
	}
	if err := pc.Subscribe(topic, sel); err != nil {
		t.Fatalf("pull Subscribe: %v", err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("pull consumer Start: %v", err)
	}
	defer shutdownBounded(t, "pull consumer", pc.Shutdown)

	brokerReturned := 0
	for qid, end := range maxOff {
		mq := &primitive.MessageQueue{Topic: topic, BrokerName: bname, QueueId: qid}
		off := int64(0)
		for off < end {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			res, err := pc.PullFrom(ctx, mq, off, 32)
			cancel()
			if err != nil {
				t.Fatalf("PullFrom queue %d offset %d: %v", qid, off, err)
			}
			raw := primitive.DecodeMessage(res.GetBody())
			for _, m := range raw {
				brokerReturned++
				if tg := m.GetTags(); tg != "A" && tg != "C" {
					t.Errorf("broker returned a message with tag %q for subscription %q (queue %d offset %d)", tg, sel.Expression, qid, m.QueueOffset)
				}
			}
			if res.NextBeginOffset <= off {
				t.Fatalf("queue %d: pull from %d did not advance (status %v, next %d)", qid, off, res.Status, res.NextBeginOffset)
			}
			off = res.NextBeginOffset
		}
	}
	if brokerReturned != len(want) {
		t.Errorf("broker returned %d messages for %q via pull, want %d", brokerReturned, sel.Expression, len(want))
	}
}
